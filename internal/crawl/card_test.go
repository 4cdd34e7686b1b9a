package crawl_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/summary"
)

// TestEveryReadyArticleHasItsCard: after a crawl of the simulated web every
// ready article has one summary card — a summary-access site's too, built
// from the head that was read — whose summary is the page's own words
// (each sentence found in the true body text) within 300 characters and
// 10% of the body, and whose title and source are the article's.
func TestEveryReadyArticleHasItsCard(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	w.crawl(t, nil, false)
	ctx := context.Background()
	truth := map[string]string{}
	for _, a := range w.sim.Truth() {
		norm, err := extract.NormalizeURL(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		truth[norm] = strings.Join(strings.Fields(a.BodyText), "")
	}
	grades := map[string]map[string]int{}
	summarySite := 0
	for _, a := range crawltest.AllArticles(t, st) {
		if a.Status != model.StatusReady {
			continue
		}
		c, err := st.CardByArticle(ctx, a.ID)
		if err != nil {
			t.Errorf("%s: no card: %v", a.URL, err)
			continue
		}
		site, err := st.SiteByID(ctx, a.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		if grades[site.Access] == nil {
			grades[site.Access] = map[string]int{}
		}
		grades[site.Access][c.Grade]++
		if site.Access == model.AccessSummary {
			summarySite++
			if a.ContentText != "" {
				t.Errorf("%s: summary-access article keeps body text", a.URL)
			}
		}
		if c.Title != a.Title || c.SourceURL != a.URL || c.SourceDNA == "" || c.Simhash == 0 {
			t.Errorf("%s: card %q %q dna %q simhash %x", a.URL, c.Title, c.SourceURL, c.SourceDNA, c.Simhash)
		}
		body, ok := truth[a.URL]
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(c.Summary); n > 300 || n > utf8.RuneCountInString(body)/10 {
			t.Errorf("%s: summary of %d characters for a body of %d (not counting white space): over min(300, 10%%)", a.URL, n, utf8.RuneCountInString(body))
		}
		for _, s := range strings.FieldsFunc(c.Summary, func(r rune) bool { return strings.ContainsRune("。！？；\n", r) }) {
			s = strings.Join(strings.Fields(strings.TrimSuffix(s, "…")), "")
			if s != "" && !strings.Contains(body, s) {
				t.Errorf("%s: summary sentence %q is not in the page", a.URL, s)
			}
		}
	}
	if summarySite == 0 {
		t.Error("no summary-access article stored: the test covers nothing of that policy")
	}
	t.Logf("card grades by access policy: %v", grades)
	var n int
	if err := st.CardFingerprints(ctx, 0, func(int64, uint64) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("%d cards fingerprinted, %v", n, err)
	}
	// A card is marked a near-duplicate only of the same document: the
	// simulated sites' documents share set phrases, never their titles.
	rows, err := st.DB().QueryContext(ctx, `SELECT c.title, o.title FROM summary_card c JOIN summary_card o ON o.id = c.duplicate_of`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	squash := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				return r
			}
			return -1
		}, s)
	}
	for rows.Next() {
		var title, original string
		if err := rows.Scan(&title, &original); err != nil {
			t.Fatal(err)
		}
		a, b := squash(title), squash(original)
		if !strings.Contains(a, b) && !strings.Contains(b, a) {
			t.Errorf("card %q hidden as a duplicate of another document, %q", title, original)
		}
	}
}

// TestCardsForArticlesStoredBeforeCards: articles stored without a card (as
// before cards existed) get one — a full-access article from its stored
// text, a summary-access one by reading its head again once, not answered
// from the site's 304.
func TestCardsForArticlesStoredBeforeCards(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	w.crawl(t, nil, false)
	ctx := context.Background()
	count := func() (full, summary int) {
		t.Helper()
		rows, err := st.DB().QueryContext(ctx, `SELECT s.access, COUNT(*) FROM summary_card c JOIN crawl_site s ON s.id = c.site_id GROUP BY s.access`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var access string
			var n int
			if err := rows.Scan(&access, &n); err != nil {
				t.Fatal(err)
			}
			if access == model.AccessFull {
				full = n
			} else {
				summary = n
			}
		}
		return full, summary
	}
	full, summary := count()
	if full == 0 || summary == 0 {
		t.Fatalf("after the crawl: %d full-access and %d summary-access cards", full, summary)
	}
	if _, err := st.DB().ExecContext(ctx, `DELETE FROM summary_card`); err != nil {
		t.Fatal(err)
	}
	made, err := crawl.BackfillCards(ctx, st, nil)
	if err != nil || made != full {
		t.Fatalf("backfill made %d cards (%v), want the %d full-access ones", made, err, full)
	}
	if again, err := crawl.BackfillCards(ctx, st, nil); err != nil || again != 0 {
		t.Fatalf("a second backfill made %d (%v), want 0", again, err)
	}
	// The summary site's articles are due for their re-check at once (the
	// crawl's clock runs a year ahead); each head is read again in full.
	before := len(w.sim.AccessLog(newsHost))
	later := time.Now().AddDate(1, 0, 0)
	w.crawl(t, func() time.Time { return later }, false)
	if f, s := count(); f != full || s != summary {
		t.Fatalf("after the re-check: %d full-access and %d summary-access cards, want %d and %d", f, s, full, summary)
	}
	pages := map[string]bool{} // the summary site's article paths, read again?
	for _, a := range crawltest.AllArticles(t, st) {
		if rest, ok := strings.CutPrefix(a.URL, "http://"+newsHost); ok && a.Status == model.StatusReady {
			pages[rest] = false
		}
	}
	for _, acc := range w.sim.AccessLog(newsHost)[before:] {
		if _, ok := pages[acc.Path]; !ok {
			continue
		}
		if acc.Status == http.StatusNotModified {
			t.Errorf("summary-access page without a card answered 304: %s", acc.Path)
		}
		pages[acc.Path] = true
	}
	for p, read := range pages {
		if !read {
			t.Errorf("summary-access page without a card not read again: %s", p)
		}
	}
}

// TestCardIndexSeesOtherProcessesCards: two processes share a database;
// a card the other one stored after this one built its index is still
// found, so a reprint of it is marked as one.
func TestCardIndexSeesOtherProcessesCards(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	ctx := context.Background()
	idx, err := crawl.LoadCardIndex(ctx, st) // this process, at its start
	if err != nil {
		t.Fatal(err)
	}
	var target model.Target
	for _, tg := range w.w.Targets(t, false) {
		if s, err := st.SiteByID(ctx, tg.SiteID); err == nil && s.Access == model.AccessFull {
			target = tg
			break
		}
	}
	if target.ID == 0 {
		t.Fatal("no target of a full-access site")
	}
	text := strings.Repeat("为推动全市经济社会高质量发展，根据《优化营商环境条例》等有关规定，现就建立企业服务专员制度通知如下。"+
		"各县（市、区）要在2026年6月30日前完成专员配备，市财政安排专项资金1200万元。\n", 3)
	article := func(path, title string) *model.Article {
		pub := time.Date(2026, 3, 5, 2, 0, 0, 0, time.UTC)
		u := "http://www.lianzhou.gov.test/" + path
		return &model.Article{SiteID: target.SiteID, TargetID: target.ID, URL: u, Title: title, ContentText: text,
			Status: model.StatusReady, FetchedAt: time.Now(), PublishTime: &pub}
	}
	// The other process stores the original with its card.
	orig := article("zcwj/orig.html", "关于建立企业服务专员制度的通知")
	c := summary.Build(summary.Input{Title: orig.Title, Text: text, SourceURL: orig.URL, FetchedAt: orig.FetchedAt})
	orig.Card = &model.SummaryCard{Title: c.Title, AutoSummary: c.Summary, SourceURL: c.SourceURL, Simhash: c.Simhash,
		SourceDNA: c.SourceDNA, FetchedAt: c.FetchedAt, Sigma: c.Sigma, Relevance: c.Relevance, Grade: string(c.Grade), SummaryLimit: c.Limit}
	if _, _, err := st.SaveArticle(ctx, orig, nil, 0, store.FrontierMark{}); err != nil {
		t.Fatal(err)
	}
	// This process makes the card of a reprint.
	reprint := article("zcwj/reprint.html", "转发关于建立企业服务专员制度的通知")
	if _, _, err := st.SaveArticle(ctx, reprint, nil, 0, store.FrontierMark{}); err != nil {
		t.Fatal(err)
	}
	if n, err := crawl.BackfillCards(ctx, st, idx); err != nil || n != 1 {
		t.Fatalf("made %d cards, %v", n, err)
	}
	got, err := st.CardByArticle(ctx, reprint.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DuplicateOf == nil || *got.DuplicateOf != orig.Card.ID {
		t.Fatalf("the reprint's card points to %v, want the other process's card %d", got.DuplicateOf, orig.Card.ID)
	}
}
