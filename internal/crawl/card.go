package crawl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"zhizhi/internal/model"
	"zhizhi/internal/neardup"
	"zhizhi/internal/store"
	"zhizhi/internal/summary"
)

// CardIndex is the near-duplicate index of the stored cards. Several
// processes may store cards in one database: before each lookup it takes in
// the cards stored since it last looked, by any of them.
type CardIndex struct {
	st   *store.Store
	idx  *neardup.Index
	mu   sync.Mutex // guards seen; one refresh at a time
	seen int64      // the highest card id read from the store
}

// LoadCardIndex builds the index of the stored cards, once at start.
func LoadCardIndex(ctx context.Context, st *store.Store) (*CardIndex, error) {
	type fp struct {
		id int64
		fp uint64
	}
	var all []fp
	if err := st.CardFingerprints(ctx, 0, func(id int64, f uint64) error {
		all = append(all, fp{id, f})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("near-duplicate index: %w", err)
	}
	i := 0
	x := &CardIndex{st: st, idx: neardup.Build(len(all), func() (int64, uint64, bool) {
		if i == len(all) {
			return 0, 0, false
		}
		i++
		return all[i-1].id, all[i-1].fp, true
	})}
	if len(all) > 0 {
		x.seen = all[len(all)-1].id
	}
	return x, nil
}

// query returns the stored cards within neardup.MaxDistance of fp, after
// taking in the cards stored since the last look.
func (x *CardIndex) query(ctx context.Context, fp uint64) ([]neardup.Match, error) {
	x.mu.Lock()
	err := x.st.CardFingerprints(ctx, x.seen, func(id int64, f uint64) error {
		x.idx.Add(id, f)
		x.seen = id
		return nil
	})
	x.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("near-duplicate index: %w", err)
	}
	return x.idx.Query(fp, neardup.MaxDistance), nil
}

// Len is how many cards the index holds.
func (x *CardIndex) Len() int { return x.idx.Len() }

// BackfillCards makes the cards of stored articles that have none — kept
// before cards existed — from their stored text, and returns how many it
// made. Articles of summary-access sites keep no text: processItem reads
// their heads again, once, the next time they are checked.
func BackfillCards(ctx context.Context, st *store.Store, idx *CardIndex) (int, error) {
	j := &job{c: &Crawler{Store: st, Cards: idx}}
	made := 0
	var after int64
	for {
		batch, err := st.ArticlesWithoutCard(ctx, after, 200)
		if err != nil || len(batch) == 0 {
			return made, err
		}
		for i := range batch {
			a := &batch[i]
			after = a.ID
			sc, err := j.card(ctx, a, a, a.ContentText)
			if err != nil {
				return made, err
			}
			if err := st.SaveCard(ctx, a.ID, a.SiteID, sc); err != nil {
				return made, fmt.Errorf("card of %s: %w", a.URL, err)
			}
			j.indexCard(sc)
			made++
		}
	}
}

// card makes the summary card of a ready article from the text its page
// gave: the whole body on a full-access site, only the head that was read
// on a summary-access one. A card that is a near duplicate of another
// article's card points to it, so the portal shows the text once.
func (j *job) card(ctx context.Context, a *model.Article, existing *model.Article, text string) (*model.SummaryCard, error) {
	c := summary.Build(summary.Input{Title: a.Title, Text: text, SourceURL: a.URL, PublishTime: a.PublishTime, FetchedAt: a.FetchedAt})
	sc := &model.SummaryCard{Title: c.Title, AutoSummary: c.Summary, SourceURL: c.SourceURL, PublishTime: c.PublishTime,
		Simhash: c.Simhash, SourceDNA: c.SourceDNA, FetchedAt: c.FetchedAt, Covered: c.Covered, Sigma: c.Sigma,
		Relevance: c.Relevance, Grade: string(c.Grade), ReferenceSimhash: c.Reference, SummaryLimit: c.Limit, Anchors: make([]model.CardAnchor, 0, len(c.Anchors))}
	for _, an := range c.Anchors {
		sc.Anchors = append(sc.Anchors, model.CardAnchor{Text: an.Text, Kind: an.Kind})
	}
	if j.c.Cards == nil {
		return sc, nil
	}
	matches, err := j.c.Cards.query(ctx, sc.Simhash)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return sc, nil
	}
	var own int64
	if existing != nil && existing.ID != 0 {
		mine, err := j.c.Store.CardByArticle(ctx, existing.ID)
		switch {
		case err == nil:
			own = mine.ID
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	for _, m := range matches {
		if m.ID == own {
			continue
		}
		// Government documents share whole paragraphs of set phrases, so
		// close bodies alone do not make a reprint: the titles must name
		// the same document too.
		other, err := j.c.Store.CardByID(ctx, m.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // gone since the index was built
		}
		if err != nil {
			return nil, err
		}
		if sameDocument(sc.Title, other.Title) {
			id := m.ID
			sc.DuplicateOf = &id
			break
		}
	}
	return sc, nil
}

// sameDocument says whether two titles name one document: equal once
// white space and punctuation are set aside, or one holding the other (a
// reprint's "转发…" or a site's prefix).
func sameDocument(a, b string) bool {
	a, b = titleKey(a), titleKey(b)
	if a == "" || b == "" {
		return false
	}
	return strings.Contains(a, b) || strings.Contains(b, a)
}

func titleKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// indexCard adds a stored card that is not a duplicate to the index.
func (j *job) indexCard(sc *model.SummaryCard) {
	if j.c.Cards == nil || sc == nil || sc.ID == 0 {
		return
	}
	if sc.DuplicateOf != nil {
		j.c.Cards.idx.Remove(sc.ID)
		return
	}
	j.c.Cards.idx.Add(sc.ID, sc.Simhash)
}
