package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Work statuses. Held back is not a status: a work is held back from a
// release for reasons computed when the release is built (rights, QA,
// review), which the console lists.
const (
	WorkActive      = "active"
	WorkFrozen      = "frozen"      // a takedown at its source
	WorkQuarantined = "quarantined" // a person's decision
	WorkMerged      = "merged"      // a person decided it is the same work as another
)

// Review states of a work.
const (
	ReviewNone     = "none"     // nothing asks for a person's look
	ReviewPending  = "pending"  // a duplicate candidate waits for a decision
	ReviewApproved = "approved" // a person let it through
	ReviewRejected = "rejected" // a person kept it out
)

// Candidate decisions.
const (
	CandidateOpen      = "open"
	CandidateSame      = "same"
	CandidateDifferent = "different"
)

// ErrCorpusRace is a write that lost a race with another intake of the
// same work; the caller reads again and retries.
var ErrCorpusRace = errors.New("another intake of this work got there first")

// CorpusSnapshot is one copied exchange: its WARC, normalized text and
// manifest, each a blob.
type CorpusSnapshot struct {
	ID             string
	RawSHA256      string
	TextSHA256     string
	WARCPath       string
	WARCSHA256     string
	TextPath       string
	ManifestPath   string
	ManifestSHA256 string
	SourceURL      string
	FetchedAt      time.Time
	Provider       string
	CrawlLogID     *int64
	Robots         string
	Access         string
	Rights         string
	CreatedAt      time.Time
}

// CorpusWork is a work: a stable id, its source, its current revision.
type CorpusWork struct {
	ID           string
	SourceURL    string
	SiteID       *int64
	ArticleID    *int64
	CurrentRev   int
	Status       string
	StatusReason string
	MergedInto   string
	Review       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// CorpusRevision is one content of a work.
type CorpusRevision struct {
	WorkID     string
	Rev        int
	SnapshotID string
	TextSHA256 string
	Simhash    uint64
	Title      string
	DocNo      string
	Publisher  string
	Attrs      json.RawMessage // the article's attributes as JSON
	Chars      int
	QA         string          // pass | fail
	QAProblems json.RawMessage // a JSON array of the failed checks
	CreatedAt  time.Time
}

// CorpusEvent is one provenance step of a work.
type CorpusEvent struct {
	ID       int64
	WorkID   string
	Rev      int
	Kind     string
	Actor    string
	Detail   string
	Evidence string
	At       time.Time
}

// CorpusCandidate is a possible duplicate pair, for people to decide.
type CorpusCandidate struct {
	ID        int64
	WorkA     string
	WorkB     string
	Kind      string // exact | near | biblio
	Distance  int
	Detail    string
	Status    string
	DecidedBy string
	DecidedAt *time.Time
	CreatedAt time.Time
	TitleA    string // filled by ListCorpusCandidates
	TitleB    string
}

// CorpusIntake is everything one intake writes, in one transaction: a
// snapshot (kept once), a work (NewWork: created), its aliases, a new
// revision (nil when the content did not change), events and candidates.
type CorpusIntake struct {
	Snapshot   *CorpusSnapshot
	Work       *CorpusWork
	NewWork    bool
	Aliases    []string
	Revision   *CorpusRevision
	Events     []CorpusEvent
	Candidates []CorpusCandidate
}

const snapshotCols = `id, raw_sha256, text_sha256, warc_path, warc_sha256, text_path, manifest_path, manifest_sha256,
	source_url, fetched_at, provider, crawl_log_id, robots, access, rights, created_at`

func scanSnapshot(sc interface{ Scan(...any) error }) (*CorpusSnapshot, error) {
	var n CorpusSnapshot
	var cl sql.NullInt64
	if err := sc.Scan(&n.ID, &n.RawSHA256, &n.TextSHA256, &n.WARCPath, &n.WARCSHA256, &n.TextPath, &n.ManifestPath,
		&n.ManifestSHA256, &n.SourceURL, timeCol{&n.FetchedAt}, &n.Provider, &cl, &n.Robots, &n.Access, &n.Rights,
		timeCol{&n.CreatedAt}); err != nil {
		return nil, err
	}
	if cl.Valid {
		n.CrawlLogID = &cl.Int64
	}
	return &n, nil
}

// CorpusSnapshotByContent returns the snapshot of these raw bytes and
// text, ErrNotFound when there is none.
func (s *Store) CorpusSnapshotByContent(ctx context.Context, rawSHA, textSHA string) (*CorpusSnapshot, error) {
	n, err := scanSnapshot(s.conn().queryRow(ctx, `SELECT `+snapshotCols+` FROM corpus_snapshot
		WHERE raw_sha256 = ? AND text_sha256 = ?`, rawSHA, textSHA))
	if err != nil {
		return nil, fmt.Errorf("corpus snapshot: %w", notFound(err))
	}
	return n, nil
}

// CorpusSnapshot returns snapshot id, ErrNotFound when there is none.
func (s *Store) CorpusSnapshot(ctx context.Context, id string) (*CorpusSnapshot, error) {
	n, err := scanSnapshot(s.conn().queryRow(ctx, `SELECT `+snapshotCols+` FROM corpus_snapshot WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("corpus snapshot %s: %w", id, notFound(err))
	}
	return n, nil
}

// CorpusSnapshots calls fn for every snapshot, oldest first.
func (s *Store) CorpusSnapshots(ctx context.Context, fn func(*CorpusSnapshot) error) error {
	rows, err := s.conn().query(ctx, `SELECT `+snapshotCols+` FROM corpus_snapshot ORDER BY created_at, id`)
	if err != nil {
		return fmt.Errorf("corpus snapshots: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanSnapshot(rows)
		if err != nil {
			return fmt.Errorf("corpus snapshots: %w", err)
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	return rows.Err()
}

const workCols = `w.id, w.source_url, w.site_id, w.article_id, w.current_rev, w.status, w.status_reason,
	w.merged_into, w.review, w.created_at, w.updated_at`

func scanWork(sc interface{ Scan(...any) error }, extra ...any) (*CorpusWork, error) {
	var w CorpusWork
	var site, art sql.NullInt64
	dst := append([]any{&w.ID, &w.SourceURL, &site, &art, &w.CurrentRev, &w.Status, &w.StatusReason,
		strCol{&w.MergedInto}, &w.Review, timeCol{&w.CreatedAt}, timeCol{&w.UpdatedAt}}, extra...)
	if err := sc.Scan(dst...); err != nil {
		return nil, err
	}
	if site.Valid {
		w.SiteID = &site.Int64
	}
	if art.Valid {
		w.ArticleID = &art.Int64
	}
	return &w, nil
}

// CorpusWork returns work id, ErrNotFound when there is none.
func (s *Store) CorpusWork(ctx context.Context, id string) (*CorpusWork, error) {
	w, err := scanWork(s.conn().queryRow(ctx, `SELECT `+workCols+` FROM corpus_work w WHERE w.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("corpus work %s: %w", id, notFound(err))
	}
	return w, nil
}

// CorpusWorkByAlias returns the work that answers to alias, ErrNotFound
// when none does.
func (s *Store) CorpusWorkByAlias(ctx context.Context, alias string) (*CorpusWork, error) {
	w, err := scanWork(s.conn().queryRow(ctx, `SELECT `+workCols+` FROM corpus_work w
		JOIN corpus_alias a ON a.work_id = w.id WHERE a.alias = ?`, alias))
	if err != nil {
		return nil, fmt.Errorf("corpus work %s: %w", alias, notFound(err))
	}
	return w, nil
}

// CorpusAliases returns work id's aliases.
func (s *Store) CorpusAliases(ctx context.Context, id string) ([]string, error) {
	rows, err := s.conn().query(ctx, `SELECT alias FROM corpus_alias WHERE work_id = ? ORDER BY created_at, alias`, id)
	if err != nil {
		return nil, fmt.Errorf("corpus aliases of %s: %w", id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

const revisionCols = `r.work_id, r.rev, r.snapshot_id, r.text_sha256, r.simhash, r.title, r.doc_no, r.publisher,
	r.attrs_json, r.chars, r.qa, r.qa_json, r.created_at`

func revisionDest(r *CorpusRevision, simhash *int64) []any {
	return []any{&r.WorkID, &r.Rev, &r.SnapshotID, &r.TextSHA256, simhash, &r.Title, &r.DocNo, &r.Publisher,
		jsonCol{&r.Attrs}, &r.Chars, &r.QA, jsonCol{&r.QAProblems}, timeCol{&r.CreatedAt}}
}

func scanRevision(sc interface{ Scan(...any) error }) (*CorpusRevision, error) {
	var r CorpusRevision
	var sh int64
	if err := sc.Scan(revisionDest(&r, &sh)...); err != nil {
		return nil, err
	}
	r.Simhash = uint64(sh)
	return &r, nil
}

// CorpusRevision returns revision rev of work id, ErrNotFound when there
// is none.
func (s *Store) CorpusRevision(ctx context.Context, id string, rev int) (*CorpusRevision, error) {
	r, err := scanRevision(s.conn().queryRow(ctx, `SELECT `+revisionCols+` FROM corpus_revision r
		WHERE r.work_id = ? AND r.rev = ?`, id, rev))
	if err != nil {
		return nil, fmt.Errorf("corpus work %s revision %d: %w", id, rev, notFound(err))
	}
	return r, nil
}

// CorpusRevisions returns every revision of work id, oldest first.
func (s *Store) CorpusRevisions(ctx context.Context, id string) ([]CorpusRevision, error) {
	rows, err := s.conn().query(ctx, `SELECT `+revisionCols+` FROM corpus_revision r WHERE r.work_id = ? ORDER BY r.rev`, id)
	if err != nil {
		return nil, fmt.Errorf("corpus revisions of %s: %w", id, err)
	}
	defer rows.Close()
	var out []CorpusRevision
	for rows.Next() {
		r, err := scanRevision(rows)
		if err != nil {
			return nil, fmt.Errorf("corpus revisions of %s: %w", id, err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// CorpusLookalike is the current revision of another work that may be the
// same document, for candidate detection.
type CorpusLookalike struct {
	WorkID     string
	TextSHA256 string
	Simhash    uint64
	Title      string
	DocNo      string
	Publisher  string
}

// CorpusLookalikes returns the current revisions of works other than
// except whose text is textSHA, whose title is title, or whose 文号 is
// docNo (when not empty). Merged works are left out.
func (s *Store) CorpusLookalikes(ctx context.Context, except, textSHA, title, docNo string) ([]CorpusLookalike, error) {
	rows, err := s.conn().query(ctx, `SELECT r.work_id, r.text_sha256, r.simhash, r.title, r.doc_no, r.publisher
		FROM corpus_revision r JOIN corpus_work w ON w.id = r.work_id AND w.current_rev = r.rev
		WHERE w.id <> ? AND w.status <> 'merged' AND (r.text_sha256 = ? OR r.title = ? OR (r.doc_no <> '' AND r.doc_no = ?))
		ORDER BY r.work_id LIMIT 200`, except, textSHA, title, docNo)
	if err != nil {
		return nil, fmt.Errorf("corpus lookalikes: %w", err)
	}
	defer rows.Close()
	var out []CorpusLookalike
	for rows.Next() {
		var l CorpusLookalike
		var sh int64
		if err := rows.Scan(&l.WorkID, &l.TextSHA256, &sh, &l.Title, &l.DocNo, &l.Publisher); err != nil {
			return nil, err
		}
		l.Simhash = uint64(sh)
		out = append(out, l)
	}
	return out, rows.Err()
}

// SaveCorpusIntake writes in one transaction. A race with another intake
// of the same work (an alias or a revision number taken) is ErrCorpusRace.
func (s *Store) SaveCorpusIntake(ctx context.Context, in *CorpusIntake) error {
	now := s.now()
	err := s.WithTx(ctx, func(tx *Tx) error {
		c := tx.c
		if n := in.Snapshot; n != nil {
			if n.CreatedAt.IsZero() {
				n.CreatedAt = now
			}
			if _, err := c.exec(ctx, `INSERT INTO corpus_snapshot (`+snapshotCols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				n.ID, n.RawSHA256, n.TextSHA256, n.WARCPath, n.WARCSHA256, n.TextPath, n.ManifestPath, n.ManifestSHA256,
				n.SourceURL, s.ts(n.FetchedAt), n.Provider, n.CrawlLogID, n.Robots, n.Access, n.Rights, s.ts(n.CreatedAt)); err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
		}
		w := in.Work
		if in.NewWork {
			w.CreatedAt = now
			if _, err := c.exec(ctx, `INSERT INTO corpus_work (id, source_url, site_id, article_id, current_rev, status,
				status_reason, review, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
				w.ID, w.SourceURL, w.SiteID, w.ArticleID, w.Status, w.StatusReason, w.Review, s.ts(now), s.ts(now)); err != nil {
				if ConstraintViolation(err) != "" {
					return ErrCorpusRace
				}
				return fmt.Errorf("save work: %w", err)
			}
		}
		for _, a := range in.Aliases {
			if _, err := c.exec(ctx, `INSERT INTO corpus_alias (alias, work_id, created_at) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, a, w.ID, s.ts(now)); err != nil {
				return fmt.Errorf("save alias: %w", err)
			}
			var owner string
			if err := c.queryRow(ctx, `SELECT work_id FROM corpus_alias WHERE alias = ?`, a).Scan(&owner); err != nil {
				return fmt.Errorf("save alias: %w", err)
			}
			if owner != w.ID {
				return ErrCorpusRace
			}
		}
		if r := in.Revision; r != nil {
			r.CreatedAt = now
			qa := r.QAProblems
			if len(qa) == 0 {
				qa = json.RawMessage("[]")
			}
			if _, err := c.exec(ctx, `INSERT INTO corpus_revision (work_id, rev, snapshot_id, text_sha256, simhash, title,
				doc_no, publisher, attrs_json, chars, qa, qa_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				w.ID, r.Rev, r.SnapshotID, r.TextSHA256, int64(r.Simhash), r.Title, r.DocNo, r.Publisher, string(r.Attrs),
				r.Chars, r.QA, string(qa), s.ts(now)); err != nil {
				if ConstraintViolation(err) != "" {
					return ErrCorpusRace
				}
				return fmt.Errorf("save revision: %w", err)
			}
			res, err := c.exec(ctx, `UPDATE corpus_work SET current_rev = ?, review = ?, updated_at = ?
				WHERE id = ? AND current_rev = ?`, r.Rev, w.Review, s.ts(now), w.ID, r.Rev-1)
			if err != nil {
				return fmt.Errorf("save revision: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return ErrCorpusRace
			}
			w.CurrentRev, w.UpdatedAt = r.Rev, now
		}
		for i := range in.Candidates {
			k := &in.Candidates[i]
			res, err := c.exec(ctx, `INSERT INTO corpus_candidate (work_a, work_b, kind, distance, detail, status, created_at)
				VALUES (?, ?, ?, ?, ?, 'open', ?) ON CONFLICT DO NOTHING`,
				k.WorkA, k.WorkB, k.Kind, k.Distance, clipRunes(k.Detail, 500), s.ts(now))
			if err != nil {
				return fmt.Errorf("save candidate: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // open already, or decided
			}
			// A new candidate holds both works until a person decides,
			// the one found earlier too.
			other := k.WorkA
			if other == w.ID {
				other = k.WorkB
			}
			res, err = c.exec(ctx, `UPDATE corpus_work SET review = 'pending', updated_at = ? WHERE id = ?
				AND review IN ('none', 'approved') AND status = 'active'`, s.ts(now), other)
			if err != nil {
				return fmt.Errorf("save candidate: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				var rev int
				if err := c.queryRow(ctx, `SELECT current_rev FROM corpus_work WHERE id = ?`, other).Scan(&rev); err != nil {
					return fmt.Errorf("save candidate: %w", err)
				}
				actor := "system"
				if len(in.Events) > 0 {
					actor = in.Events[0].Actor
				}
				if err := appendCorpusEvent(ctx, c, s, &CorpusEvent{WorkID: other, Rev: rev, Kind: "candidate",
					Actor: actor, Detail: "发现重复候选（" + k.Kind + "）：" + w.ID + "，待人工判定"}, now); err != nil {
					return err
				}
			}
		}
		for i := range in.Events {
			if err := appendCorpusEvent(ctx, c, s, &in.Events[i], now); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func appendCorpusEvent(ctx context.Context, c conn, s *Store, e *CorpusEvent, now time.Time) error {
	if e.At.IsZero() {
		e.At = now
	}
	id, err := c.insertID(ctx, `INSERT INTO corpus_event (work_id, rev, kind, actor, detail, evidence, at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, e.WorkID, e.Rev, e.Kind, clipRunes(e.Actor, 100), clipRunes(e.Detail, 2000),
		clipRunes(e.Evidence, 500), s.ts(e.At))
	if err != nil {
		return fmt.Errorf("provenance event %s of %s: %w", e.Kind, e.WorkID, err)
	}
	e.ID = id
	return nil
}

// CorpusEvents returns work id's provenance, oldest first.
func (s *Store) CorpusEvents(ctx context.Context, id string) ([]CorpusEvent, error) {
	rows, err := s.conn().query(ctx, `SELECT id, work_id, rev, kind, actor, detail, evidence, at FROM corpus_event
		WHERE work_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("provenance of %s: %w", id, err)
	}
	defer rows.Close()
	var out []CorpusEvent
	for rows.Next() {
		var e CorpusEvent
		if err := rows.Scan(&e.ID, &e.WorkID, &e.Rev, &e.Kind, &e.Actor, &e.Detail, &e.Evidence, timeCol{&e.At}); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetCorpusWorkStatus moves work id to status with reason, appends the
// provenance event and records the audit entry, in one transaction. The
// review state is set too when review is not empty.
func (s *Store) SetCorpusWorkStatus(ctx context.Context, id, status, review, reason, actor string) error {
	now := s.now()
	return s.WithTx(ctx, func(tx *Tx) error {
		w, err := scanWork(tx.c.queryRow(ctx, `SELECT `+workCols+` FROM corpus_work w WHERE w.id = ?`, id))
		if err != nil {
			return fmt.Errorf("corpus work %s: %w", id, notFound(err))
		}
		if review == "" {
			review = w.Review
		}
		if _, err := tx.c.exec(ctx, `UPDATE corpus_work SET status = ?, status_reason = ?, review = ?, updated_at = ? WHERE id = ?`,
			status, clipRunes(reason, 500), review, s.ts(now), id); err != nil {
			return fmt.Errorf("corpus work %s: %w", id, err)
		}
		kind := "status"
		switch {
		case status == WorkFrozen:
			kind = "takedown"
		case review != w.Review:
			kind = "review"
		}
		detail := fmt.Sprintf("%s → %s", w.Status, status)
		if review != w.Review {
			detail += fmt.Sprintf("; review %s → %s", w.Review, review)
		}
		if reason != "" {
			detail += ": " + reason
		}
		if err := appendCorpusEvent(ctx, tx.c, s, &CorpusEvent{WorkID: id, Rev: w.CurrentRev, Kind: kind, Actor: actor,
			Detail: detail}, now); err != nil {
			return err
		}
		before, _ := json.Marshal(map[string]string{"status": w.Status, "review": w.Review})
		after, _ := json.Marshal(map[string]string{"status": status, "review": review})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "corpus.work." + kind, ObjectType: "corpus_work",
			ObjectID: id, Before: before, After: after, Detail: reason})
	})
}

// CorpusWorkFilter selects works for a list.
type CorpusWorkFilter struct {
	Status string // empty: all
	Q      string // in the title or the id
	SiteID int64
	After  string // the last id of the page before
	Limit  int
}

// CorpusWorkRow is a work with its current revision and its site's
// rights profile, for lists and release builds.
type CorpusWorkRow struct {
	CorpusWork
	Rev            CorpusRevision
	SiteCode       string
	SiteName       string
	SiteRights     string // the site's profile now
	SnapshotRight  string // the profile the snapshot was taken under
	Access         string
	FetchedAt      time.Time // the snapshot's
	OpenCandidates int
}

const workRowSelect = `SELECT ` + workCols + `, ` + revisionCols + `,
	coalesce(s.site_code, ''), coalesce(s.site_name, ''), coalesce(s.corpus_rights, 'unknown'), n.rights, n.access, n.fetched_at,
	(SELECT count(*) FROM corpus_candidate c WHERE c.status = 'open' AND (c.work_a = w.id OR c.work_b = w.id))
	FROM corpus_work w JOIN corpus_revision r ON r.work_id = w.id AND r.rev = w.current_rev
	JOIN corpus_snapshot n ON n.id = r.snapshot_id
	LEFT JOIN crawl_site s ON s.id = w.site_id`

func scanWorkRow(sc interface{ Scan(...any) error }) (*CorpusWorkRow, error) {
	var row CorpusWorkRow
	var sh int64
	extra := append(revisionDest(&row.Rev, &sh), &row.SiteCode, &row.SiteName, &row.SiteRights, &row.SnapshotRight,
		&row.Access, timeCol{&row.FetchedAt}, &row.OpenCandidates)
	w, err := scanWork(sc, extra...)
	if err != nil {
		return nil, err
	}
	row.CorpusWork = *w
	row.Rev.Simhash = uint64(sh)
	return &row, nil
}

// ListCorpusWorks returns a page of works by id.
func (s *Store) ListCorpusWorks(ctx context.Context, f CorpusWorkFilter) ([]CorpusWorkRow, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "w.status = ?")
		args = append(args, f.Status)
	}
	if f.Q != "" {
		where = append(where, "(r.title LIKE ? ESCAPE '\\' OR w.id = ?)")
		args = append(args, "%"+likeEscape(f.Q)+"%", f.Q)
	}
	if f.SiteID != 0 {
		where = append(where, "w.site_id = ?")
		args = append(args, f.SiteID)
	}
	if f.After != "" {
		where = append(where, "w.id > ?")
		args = append(args, f.After)
	}
	q := workRowSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	q += fmt.Sprintf(" ORDER BY w.id LIMIT %d", f.Limit)
	rows, err := s.conn().query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("corpus works: %w", err)
	}
	defer rows.Close()
	var out []CorpusWorkRow
	for rows.Next() {
		r, err := scanWorkRow(rows)
		if err != nil {
			return nil, fmt.Errorf("corpus works: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// CorpusWorkRow returns one work as a list row, ErrNotFound when there is
// none or it has no revision.
func (s *Store) CorpusWorkRow(ctx context.Context, id string) (*CorpusWorkRow, error) {
	r, err := scanWorkRow(s.conn().queryRow(ctx, workRowSelect+` WHERE w.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("corpus work %s: %w", id, notFound(err))
	}
	return r, nil
}

// EachCorpusWork calls fn for every work with a revision, by id.
func (s *Store) EachCorpusWork(ctx context.Context, fn func(*CorpusWorkRow) error) error {
	after := ""
	for {
		page, err := s.ListCorpusWorks(ctx, CorpusWorkFilter{After: after, Limit: 1000})
		if err != nil {
			return err
		}
		for i := range page {
			if err := fn(&page[i]); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// CorpusCounts counts works by status, candidates open, snapshots.
type CorpusCounts struct {
	Works          map[string]int
	OpenCandidates int
	Snapshots      int
	Releases       int
}

// CorpusCounts returns the corpus's counts.
func (s *Store) CorpusCounts(ctx context.Context) (*CorpusCounts, error) {
	out := &CorpusCounts{Works: map[string]int{}}
	rows, err := s.conn().query(ctx, `SELECT status, count(*) FROM corpus_work GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("corpus counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out.Works[st] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := s.conn().queryRow(ctx, `SELECT (SELECT count(*) FROM corpus_candidate WHERE status = 'open'),
		(SELECT count(*) FROM corpus_snapshot), (SELECT count(*) FROM corpus_release)`).Scan(
		&out.OpenCandidates, &out.Snapshots, &out.Releases); err != nil {
		return nil, fmt.Errorf("corpus counts: %w", err)
	}
	return out, nil
}

// ListCorpusCandidates returns candidates in status (all when empty),
// newest first, with both works' titles.
func (s *Store) ListCorpusCandidates(ctx context.Context, status string, limit int) ([]CorpusCandidate, error) {
	return s.CorpusCandidatesPage(ctx, status, 0, limit)
}

// CountCorpusMerges counts the works marked merged, and how many of them a
// person decided (the rest would be merges by the system: there must be
// none).
func (s *Store) CountCorpusMerges(ctx context.Context) (merged, byPeople int, err error) {
	err = s.conn().queryRow(ctx, `SELECT (SELECT count(*) FROM corpus_work WHERE status = 'merged'),
		(SELECT count(DISTINCT c.work_b) FROM corpus_candidate c JOIN corpus_work w ON w.id = c.work_b
		 WHERE c.status = 'same' AND w.status = 'merged' AND w.merged_into = c.work_a AND c.decided_by <> '')`).Scan(&merged, &byPeople)
	if err != nil {
		return 0, 0, fmt.Errorf("corpus merges: %w", err)
	}
	return merged, byPeople, nil
}

// DecideCorpusCandidate records a person's decision on candidate id, and
// on the pair's other open candidates: same (work_b is merged into
// work_a) or different. Both works' review
// goes back to none when they have no other open candidate. Events and
// audit in the same transaction.
func (s *Store) DecideCorpusCandidate(ctx context.Context, id int64, decision, actor string) error {
	if decision != CandidateSame && decision != CandidateDifferent {
		return fmt.Errorf("decision %q: want %q or %q", decision, CandidateSame, CandidateDifferent)
	}
	now := s.now()
	return s.WithTx(ctx, func(tx *Tx) error {
		var a, b, kind, status string
		if err := tx.c.queryRow(ctx, `SELECT work_a, work_b, kind, status FROM corpus_candidate WHERE id = ?`, id).Scan(
			&a, &b, &kind, &status); err != nil {
			return fmt.Errorf("candidate %d: %w", id, notFound(err))
		}
		if status != CandidateOpen {
			return fmt.Errorf("candidate %d was already decided (%s)", id, status)
		}
		// The question is the pair's — are these one work? — whatever the
		// evidence: the decision answers the pair's other open candidates
		// (exact text, near text, same 文号) too.
		if _, err := tx.c.exec(ctx, `UPDATE corpus_candidate SET status = ?, decided_by = ?, decided_at = ?
			WHERE work_a = ? AND work_b = ? AND status = 'open'`, decision, actor, s.ts(now), a, b); err != nil {
			return fmt.Errorf("candidate %d: %w", id, err)
		}
		if decision == CandidateSame {
			if _, err := tx.c.exec(ctx, `UPDATE corpus_work SET status = 'merged', merged_into = ?, updated_at = ? WHERE id = ?`,
				a, s.ts(now), b); err != nil {
				return fmt.Errorf("candidate %d: %w", id, err)
			}
		}
		for _, w := range []string{a, b} {
			if _, err := tx.c.exec(ctx, `UPDATE corpus_work SET review = 'none', updated_at = ? WHERE id = ? AND review = 'pending'
				AND NOT EXISTS (SELECT 1 FROM corpus_candidate c WHERE c.status = 'open' AND (c.work_a = ? OR c.work_b = ?))`,
				s.ts(now), w, w, w); err != nil {
				return fmt.Errorf("candidate %d: %w", id, err)
			}
			other := b
			if w == b {
				other = a
			}
			detail := fmt.Sprintf("重复候选（%s）判定为%s：%s", kind, map[string]string{CandidateSame: "同一作品", CandidateDifferent: "不同作品"}[decision], other)
			if err := appendCorpusEvent(ctx, tx.c, s, &CorpusEvent{WorkID: w, Kind: "review", Actor: actor, Detail: detail,
				Evidence: fmt.Sprintf("candidate:%d", id)}, now); err != nil {
				return err
			}
		}
		after, _ := json.Marshal(map[string]string{"decision": decision, "work_a": a, "work_b": b})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "corpus.candidate.decide", ObjectType: "corpus_candidate",
			ObjectID: fmt.Sprint(id), After: after})
	})
}

// CorpusIntakeRule is a person's standing order to take articles in.
type CorpusIntakeRule struct {
	ID          int64
	Name        string
	TargetCodes []string // empty: every target
	Enabled     bool
	CreatedBy   string
	CreatedAt   time.Time
	LastRunAt   *time.Time
	LastAdded   int
}

// CreateCorpusIntakeRule records r (and its audit entry).
func (s *Store) CreateCorpusIntakeRule(ctx context.Context, r *CorpusIntakeRule) error {
	codes, err := json.Marshal(append([]string{}, r.TargetCodes...))
	if err != nil {
		return err
	}
	now := s.now()
	return s.WithTx(ctx, func(tx *Tx) error {
		id, err := tx.c.insertID(ctx, `INSERT INTO corpus_intake_rule (name, target_codes, enabled, created_by, created_at)
			VALUES (?, ?, ?, ?, ?)`, r.Name, string(codes), r.Enabled, r.CreatedBy, s.ts(now))
		if err != nil {
			return fmt.Errorf("intake rule: %w", err)
		}
		r.ID, r.CreatedAt = id, now
		after, _ := json.Marshal(map[string]any{"name": r.Name, "targets": r.TargetCodes, "enabled": r.Enabled})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: r.CreatedBy, Action: "corpus.rule.create", ObjectType: "corpus_intake_rule",
			ObjectID: fmt.Sprint(id), After: after})
	})
}

// CorpusIntakeRules returns every rule.
func (s *Store) CorpusIntakeRules(ctx context.Context) ([]CorpusIntakeRule, error) {
	rows, err := s.conn().query(ctx, `SELECT id, name, target_codes, enabled, created_by, created_at, last_run_at, last_added
		FROM corpus_intake_rule ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("intake rules: %w", err)
	}
	defer rows.Close()
	var out []CorpusIntakeRule
	for rows.Next() {
		var r CorpusIntakeRule
		var codes string
		if err := rows.Scan(&r.ID, &r.Name, &codes, &r.Enabled, &r.CreatedBy, timeCol{&r.CreatedAt},
			nullTimeCol{&r.LastRunAt}, &r.LastAdded); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(codes), &r.TargetCodes); err != nil {
			return nil, fmt.Errorf("intake rule %d targets: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// MarkCorpusIntakeRuleRun records that rule id ran and added n works.
func (s *Store) MarkCorpusIntakeRuleRun(ctx context.Context, id int64, n int) error {
	_, err := s.conn().exec(ctx, `UPDATE corpus_intake_rule SET last_run_at = ?, last_added = ? WHERE id = ?`, s.ts(s.now()), n, id)
	return err
}

// ArticlesForIntake returns up to limit ids of ready articles of
// full-access sites, after afterID, of targets (all when empty) that the
// corpus does not hold yet or holds from before the article last changed.
func (s *Store) ArticlesForIntake(ctx context.Context, targets []string, afterID int64, limit int) ([]int64, error) {
	q := `SELECT a.id FROM article a JOIN crawl_site s ON s.id = a.site_id
		JOIN crawl_target t ON t.id = a.target_id
		LEFT JOIN corpus_work w ON w.article_id = a.id
		WHERE a.status = 'ready' AND s.access = 'full' AND a.id > ? AND (w.id IS NULL OR a.updated_at > w.updated_at)`
	args := []any{afterID}
	if len(targets) > 0 {
		q += ` AND t.target_code IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(targets)), ", ") + `)`
		for _, t := range targets {
			args = append(args, t)
		}
	}
	q += fmt.Sprintf(` ORDER BY a.id LIMIT %d`, limit)
	rows, err := s.conn().query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("articles for intake: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// CrawlLogIDForURL returns the newest crawl_log row of a successful fetch
// of url at or before at, 0 when there is none.
func (s *Store) CrawlLogIDForURL(ctx context.Context, url string, at time.Time) (int64, error) {
	var id sql.NullInt64
	err := s.conn().queryRow(ctx, `SELECT max(id) FROM crawl_log WHERE article_url = ? AND success
		AND http_status BETWEEN 200 AND 299 AND occurred_at <= ?`, url, s.ts(at.Add(time.Minute))).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("crawl log of %s: %w", url, err)
	}
	return id.Int64, nil
}

// likeEscape escapes LIKE's wildcards with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
