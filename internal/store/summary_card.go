package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"zhizhi/internal/model"
)

const cardColumns = `c.id, c.article_id, c.site_id, c.title, c.summary, c.auto_summary, c.source_url,
	c.publish_time, c.simhash, c.source_dna, c.fetched_at, c.anchors, c.covered, c.sigma, c.relevance,
	c.grade, c.reference_simhash, c.summary_limit, c.rewritten_by, c.rewritten_at, c.duplicate_of, c.takedown_id, c.created_at, c.updated_at,
	s.site_name, a.dept_id, d.dept_name, a.channel_name,
	CASE WHEN EXISTS (SELECT 1 FROM summary_card o WHERE o.id = c.duplicate_of AND o.takedown_id IS NOT NULL) THEN 1 ELSE 0 END`

// publicCard is the condition of a card the portal shows (c is
// summary_card): model.SummaryCard.Visible in SQL.
const publicCard = `c.takedown_id IS NULL AND (c.duplicate_of IS NULL OR EXISTS (
	SELECT 1 FROM summary_card o WHERE o.id = c.duplicate_of AND o.takedown_id IS NOT NULL))`

const cardFrom = ` FROM summary_card c JOIN crawl_site s ON s.id = c.site_id JOIN article a ON a.id = c.article_id
	LEFT JOIN local_department d ON d.dept_id = a.dept_id`

func scanCard(row interface{ Scan(...any) error }) (*model.SummaryCard, error) {
	var c model.SummaryCard
	var simhash, reference int64
	var anchors json.RawMessage
	var dup, takedown, dept sql.NullInt64
	var originalFrozen int
	err := row.Scan(&c.ID, &c.ArticleID, &c.SiteID, &c.Title, &c.Summary, &c.AutoSummary, &c.SourceURL,
		nullTimeCol{&c.PublishTime}, &simhash, &c.SourceDNA, timeCol{&c.FetchedAt}, jsonCol{&anchors},
		&c.Covered, &c.Sigma, &c.Relevance, &c.Grade, &reference, &c.SummaryLimit, strCol{&c.RewrittenBy}, nullTimeCol{&c.RewrittenAt},
		&dup, &takedown, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt},
		strCol{&c.SiteName}, &dept, strCol{&c.DeptName}, strCol{&c.ChannelName}, &originalFrozen)
	if err != nil {
		return nil, err
	}
	c.Simhash, c.ReferenceSimhash = uint64(simhash), uint64(reference)
	c.OriginalFrozen = originalFrozen == 1
	if len(anchors) > 0 {
		if err := json.Unmarshal(anchors, &c.Anchors); err != nil {
			return nil, fmt.Errorf("card %d anchors: %w", c.ID, err)
		}
	}
	if dup.Valid {
		c.DuplicateOf = &dup.Int64
	}
	if takedown.Valid {
		c.TakedownID = &takedown.Int64
	}
	if dept.Valid {
		c.DeptID = &dept.Int64
	}
	return &c, nil
}

// saveCard writes the card of article id. A card whose source is the same
// text as before (same source DNA) keeps everything a person did to it — a
// rewrite, a takedown. A changed source replaces the machine's cut and drops
// a rewrite of the old text; a takedown always stays. A new card of a site
// whose cards are taken down is frozen at once.
func (t *Tx) saveCard(ctx context.Context, articleID int64, c *model.SummaryCard) error {
	c.ArticleID = articleID
	anchors, err := json.Marshal(nonNilAnchors(c.Anchors))
	if err != nil {
		return err
	}
	var (
		oldID    int64
		oldDNA   string
		oldTitle string
		takedown sql.NullInt64
	)
	err = t.c.queryRow(ctx, `SELECT id, source_dna, title, takedown_id FROM summary_card WHERE article_id = ?`, articleID).
		Scan(&oldID, &oldDNA, &oldTitle, &takedown)
	now := t.s.now()
	var dup any
	if c.DuplicateOf != nil {
		dup = *c.DuplicateOf
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.Summary = c.AutoSummary
		id, err := t.c.insertID(ctx, `INSERT INTO summary_card (article_id, site_id, title, summary, auto_summary,
			source_url, publish_time, simhash, source_dna, fetched_at, anchors, covered, sigma, relevance, grade,
			reference_simhash, summary_limit, duplicate_of, takedown_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
				(SELECT MIN(id) FROM takedown WHERE site_id = ? AND scope = 'site' AND frozen_at IS NOT NULL), ?, ?)`,
			articleID, c.SiteID, c.Title, c.Summary, c.AutoSummary, c.SourceURL, t.s.tsPtr(c.PublishTime),
			int64(c.Simhash), c.SourceDNA, t.s.ts(c.FetchedAt), string(anchors), c.Covered, c.Sigma, c.Relevance,
			c.Grade, int64(c.ReferenceSimhash), c.SummaryLimit, dup, c.SiteID, t.s.ts(now), t.s.ts(now))
		if err != nil {
			return fmt.Errorf("card: %w", err)
		}
		c.ID, c.CreatedAt, c.UpdatedAt = id, now, now
		return nil
	case err != nil:
		return fmt.Errorf("card: %w", err)
	}
	c.ID = oldID
	if takedown.Valid {
		c.TakedownID = &takedown.Int64
	}
	if oldDNA == c.SourceDNA && oldTitle == c.Title {
		return nil
	}
	c.Summary = c.AutoSummary
	_, err = t.c.exec(ctx, `UPDATE summary_card SET site_id = ?, title = ?, summary = ?, auto_summary = ?,
		source_url = ?, publish_time = ?, simhash = ?, source_dna = ?, fetched_at = ?, anchors = ?, covered = ?,
		sigma = ?, relevance = ?, grade = ?, reference_simhash = ?, summary_limit = ?, rewritten_by = NULL, rewritten_at = NULL, duplicate_of = ?,
		updated_at = ? WHERE id = ?`,
		c.SiteID, c.Title, c.Summary, c.AutoSummary, c.SourceURL, t.s.tsPtr(c.PublishTime), int64(c.Simhash),
		c.SourceDNA, t.s.ts(c.FetchedAt), string(anchors), c.Covered, c.Sigma, c.Relevance, c.Grade,
		int64(c.ReferenceSimhash), c.SummaryLimit, dup,
		t.s.ts(now), oldID)
	if err != nil {
		return fmt.Errorf("card %d: %w", oldID, err)
	}
	c.UpdatedAt = now
	return nil
}

func nonNilAnchors(a []model.CardAnchor) []model.CardAnchor {
	if a == nil {
		return []model.CardAnchor{}
	}
	return a
}

// CardByID returns one card, whatever the portal may show of it.
func (s *Store) CardByID(ctx context.Context, id int64) (*model.SummaryCard, error) {
	c, err := scanCard(s.conn().queryRow(ctx, `SELECT `+cardColumns+cardFrom+` WHERE c.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("card %d: %w", id, notFound(err))
	}
	return c, nil
}

// CardByArticle returns the card of an article.
func (s *Store) CardByArticle(ctx context.Context, articleID int64) (*model.SummaryCard, error) {
	c, err := scanCard(s.conn().queryRow(ctx, `SELECT `+cardColumns+cardFrom+` WHERE c.article_id = ?`, articleID))
	if err != nil {
		return nil, fmt.Errorf("card of article %d: %w", articleID, notFound(err))
	}
	return c, nil
}

// CardQuery filters cards. Lists run newest first (publish time, else
// fetch time), then by id.
type CardQuery struct {
	// Public keeps what the portal shows: no frozen card, no reprint of a
	// card shown.
	Public   bool
	DeptID   *int64
	SiteID   *int64
	Channel  string    // channel_name, exactly
	From, To time.Time // publish time within [From, To), zero: open
	// Q matches titles, and the summaries of green cards (the others show
	// no summary, so a reader could not see why they matched).
	Q      string
	Grade  string
	Offset int
	Limit  int // default 50, at most 500
}

func (q CardQuery) where() (string, []any) {
	where := ` WHERE 1 = 1`
	var args []any
	if q.Public {
		where += ` AND ` + publicCard
	}
	if q.DeptID != nil {
		where += ` AND a.dept_id = ?`
		args = append(args, *q.DeptID)
	}
	if q.SiteID != nil {
		where += ` AND c.site_id = ?`
		args = append(args, *q.SiteID)
	}
	if q.Channel != "" {
		where += ` AND a.channel_name = ?`
		args = append(args, q.Channel)
	}
	if q.Grade != "" {
		where += ` AND c.grade = ?`
		args = append(args, q.Grade)
	}
	if text := strings.TrimSpace(q.Q); text != "" {
		like := "%" + likeEscaper.Replace(strings.ToLower(text)) + "%"
		where += ` AND (LOWER(c.title) LIKE ? ESCAPE '\' OR (c.grade = 'green' AND LOWER(c.summary) LIKE ? ESCAPE '\'))`
		args = append(args, like, like)
	}
	return where, args
}

// ListCards returns one page of cards and how many match in all.
func (s *Store) ListCards(ctx context.Context, q CardQuery) ([]model.SummaryCard, int, error) {
	where, args := q.where()
	if !q.From.IsZero() {
		where += ` AND c.publish_time >= ?`
		args = append(args, s.ts(q.From))
	}
	if !q.To.IsZero() {
		where += ` AND c.publish_time < ?`
		args = append(args, s.ts(q.To))
	}
	var total int
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*)`+cardFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count cards: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	limit = min(limit, MaxPageLimit)
	rows, err := s.conn().query(ctx, `SELECT `+cardColumns+cardFrom+where+`
		ORDER BY COALESCE(c.publish_time, c.fetched_at) DESC, c.id DESC LIMIT ? OFFSET ?`,
		append(args, limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("list cards: %w", err)
	}
	defer rows.Close()
	var out []model.SummaryCard
	for rows.Next() {
		c, err := scanCard(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list cards: %w", err)
		}
		out = append(out, *c)
	}
	return out, total, rows.Err()
}

// CardGrades counts cards by grade; frozen and duplicate cards included.
func (s *Store) CardGrades(ctx context.Context) (map[string]int, error) {
	rows, err := s.conn().query(ctx, `SELECT grade, COUNT(*) FROM summary_card GROUP BY grade`)
	if err != nil {
		return nil, fmt.Errorf("card grades: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var g string
		var n int
		if err := rows.Scan(&g, &n); err != nil {
			return nil, fmt.Errorf("card grades: %w", err)
		}
		out[g] = n
	}
	return out, rows.Err()
}

// CardFingerprints calls fn with the id and simhash of every card after
// afterID that is not itself a duplicate, in id order: what the
// near-duplicate index is built from at start (afterID 0), and kept up to
// date from with the cards other processes store.
func (s *Store) CardFingerprints(ctx context.Context, afterID int64, fn func(id int64, simhash uint64) error) error {
	rows, err := s.conn().query(ctx, `SELECT id, simhash FROM summary_card WHERE id > ? AND duplicate_of IS NULL ORDER BY id`, afterID)
	if err != nil {
		return fmt.Errorf("card fingerprints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, fp int64
		if err := rows.Scan(&id, &fp); err != nil {
			return fmt.Errorf("card fingerprints: %w", err)
		}
		if err := fn(id, uint64(fp)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CardRewrite is a person's rewrite of a card's summary, graded by the
// same gates as the machine's cut.
type CardRewrite struct {
	Summary   string
	Covered   int
	Sigma     float64
	Relevance int
	Grade     string
	Actor     string
}

// RewriteCard replaces a card's summary with a person's text, recorded in
// the audit trail with the text it replaced.
func (s *Store) RewriteCard(ctx context.Context, id int64, r CardRewrite) (*model.SummaryCard, error) {
	var out *model.SummaryCard
	err := s.WithTx(ctx, func(tx *Tx) error {
		old, err := scanCard(tx.c.queryRow(ctx, `SELECT `+cardColumns+cardFrom+` WHERE c.id = ?`, id))
		if err != nil {
			return fmt.Errorf("card %d: %w", id, notFound(err))
		}
		now := s.now()
		if _, err := tx.c.exec(ctx, `UPDATE summary_card SET summary = ?, covered = ?, sigma = ?, relevance = ?,
			grade = ?, rewritten_by = ?, rewritten_at = ?, updated_at = ? WHERE id = ?`,
			r.Summary, r.Covered, r.Sigma, r.Relevance, r.Grade, r.Actor, s.ts(now), s.ts(now), id); err != nil {
			return fmt.Errorf("rewrite card %d: %w", id, err)
		}
		before, _ := json.Marshal(map[string]any{"summary": old.Summary, "grade": old.Grade, "sigma": old.Sigma})
		after, _ := json.Marshal(map[string]any{"summary": r.Summary, "grade": r.Grade, "sigma": r.Sigma})
		if err := tx.RecordAudit(ctx, &AuditEntry{Actor: r.Actor, Action: "card.rewrite", ObjectType: "card",
			ObjectID: fmt.Sprint(id), Before: before, After: after}); err != nil {
			return err
		}
		out = old
		out.Summary, out.Covered, out.Sigma, out.Relevance, out.Grade = r.Summary, r.Covered, r.Sigma, r.Relevance, r.Grade
		out.RewrittenBy, out.RewrittenAt, out.UpdatedAt = r.Actor, &now, now
		return nil
	})
	return out, err
}

// ArticlesWithoutCard returns ready articles of full-access sites that have
// body text and no card yet (stored before cards existed), after afterID
// in id order: their cards can be made from what is stored. A
// summary-access site keeps no text; its articles get their cards when the
// crawler reads their heads again.
func (s *Store) ArticlesWithoutCard(ctx context.Context, afterID int64, limit int) ([]model.Article, error) {
	rows, err := s.conn().query(ctx, `SELECT `+articleColumns+` FROM article a JOIN crawl_site s ON s.id = a.site_id
		WHERE a.id > ? AND a.status = ? AND s.access = ? AND a.content_text IS NOT NULL AND a.content_text <> ''
		AND NOT EXISTS (SELECT 1 FROM summary_card c WHERE c.article_id = a.id)
		ORDER BY a.id LIMIT ?`, afterID, model.StatusReady, model.AccessFull, limit)
	if err != nil {
		return nil, fmt.Errorf("articles without a card: %w", err)
	}
	defer rows.Close()
	var out []model.Article
	for rows.Next() {
		a, err := scanArticle(rows)
		if err != nil {
			return nil, fmt.Errorf("articles without a card: %w", err)
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// HasCard says whether article id has a card.
func (s *Store) HasCard(ctx context.Context, articleID int64) (bool, error) {
	var n int
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*) FROM summary_card WHERE article_id = ?`, articleID).Scan(&n); err != nil {
		return false, fmt.Errorf("card of article %d: %w", articleID, err)
	}
	return n > 0, nil
}

// SaveCard writes the card of a stored article on its own, as saving the
// article would.
func (s *Store) SaveCard(ctx context.Context, articleID, siteID int64, c *model.SummaryCard) error {
	c.SiteID = siteID
	return s.WithTx(ctx, func(tx *Tx) error { return tx.saveCard(ctx, articleID, c) })
}
