package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Frontier states: where an article link a list showed stands.
const (
	FrontierNew        = "new"        // discovered, never fetched
	FrontierFetched    = "fetched"    // stored; re-checked when url_state says it is due
	FrontierFailed     = "failed"     // the last attempt failed; retried at next_attempt_at
	FrontierGone       = "gone"       // the site answered 404 or 410
	FrontierDisallowed = "disallowed" // robots.txt forbids it; looked at again at next_attempt_at
)

// How a list walk ended.
const (
	WalkReachedEnd   = "end"   // the list had no further page
	WalkReachedKnown = "known" // a page of links settled by an earlier finished walk
	WalkReachedLimit = "limit" // the page limit
)

// FrontierEntry is one article link of a target.
type FrontierEntry struct {
	ID             int64
	TargetID       int64
	URL            string
	URLHash        string
	NativePostID   string
	Item           json.RawMessage // the list item as read (title, fields, attachments)
	State          string
	Attempts       int
	ErrorClass     string
	LastError      string
	NextAttemptAt  *time.Time
	DiscoveredWalk int64
	ArticleID      *int64
	DiscoveredAt   time.Time
	LastSeenAt     time.Time
	UpdatedAt      time.Time
}

const frontierColumns = `id, target_id, url, url_hash, native_post_id, item_json, state, attempts, error_class,
	last_error, next_attempt_at, discovered_walk, article_id, discovered_at, last_seen_at, updated_at`

func scanFrontier(row interface{ Scan(...any) error }) (*FrontierEntry, error) {
	var e FrontierEntry
	var article sql.NullInt64
	err := row.Scan(&e.ID, &e.TargetID, &e.URL, &e.URLHash, strCol{&e.NativePostID}, jsonCol{&e.Item}, &e.State,
		&e.Attempts, strCol{&e.ErrorClass}, strCol{&e.LastError}, nullTimeCol{&e.NextAttemptAt}, &e.DiscoveredWalk,
		&article, timeCol{&e.DiscoveredAt}, timeCol{&e.LastSeenAt}, timeCol{&e.UpdatedAt})
	if err != nil {
		return nil, err
	}
	if article.Valid {
		e.ArticleID = &article.Int64
	}
	return &e, nil
}

// Walk is one reading of a target's list pages.
type Walk struct {
	ID          int64
	TargetID    int64
	Full        bool
	StartedAt   time.Time
	FinishedAt  *time.Time
	DeepestPage int
	Reached     string
	Error       string
}

const walkColumns = `id, target_id, full_walk, started_at, finished_at, deepest_page, reached, error_msg`

func scanWalk(row interface{ Scan(...any) error }) (*Walk, error) {
	var w Walk
	err := row.Scan(&w.ID, &w.TargetID, &w.Full, timeCol{&w.StartedAt}, nullTimeCol{&w.FinishedAt}, &w.DeepestPage,
		strCol{&w.Reached}, strCol{&w.Error})
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// StartWalk records the start of a list walk of a target. lastFinished is
// the id of the target's latest finished walk (0 when none finished): a link
// first discovered by that walk or before it is settled, and a page of
// settled links may end the new walk.
func (s *Store) StartWalk(ctx context.Context, targetID int64, full bool) (walk *Walk, lastFinished int64, err error) {
	err = s.WithTx(ctx, func(tx *Tx) error {
		var last sql.NullInt64
		if err := tx.c.queryRow(ctx, `SELECT max(id) FROM list_walk WHERE target_id = ? AND finished_at IS NOT NULL`,
			targetID).Scan(&last); err != nil {
			return err
		}
		lastFinished = last.Int64
		now := s.now()
		id, err := tx.c.insertID(ctx, `INSERT INTO list_walk (target_id, full_walk, started_at) VALUES (?, ?, ?)`,
			targetID, full, s.ts(now))
		if err != nil {
			return err
		}
		walk = &Walk{ID: id, TargetID: targetID, Full: full, StartedAt: now}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("start list walk of target %d: %w", targetID, err)
	}
	return walk, lastFinished, nil
}

// WalkReached records that a walk read list page `page` (1-based).
func (s *Store) WalkReached(ctx context.Context, walkID int64, page int) error {
	_, err := s.conn().exec(ctx, `UPDATE list_walk SET deepest_page = ? WHERE id = ? AND deepest_page < ?`, page, walkID, page)
	if err != nil {
		return fmt.Errorf("list walk %d: %w", walkID, err)
	}
	return nil
}

// FinishWalk records that a walk finished: it reached the end of the list,
// links settled before it, or the page limit.
func (s *Store) FinishWalk(ctx context.Context, walkID int64, reached string) error {
	_, err := s.conn().exec(ctx, `UPDATE list_walk SET finished_at = ?, reached = ?, error_msg = NULL WHERE id = ?`,
		s.ts(s.now()), reached, walkID)
	if err != nil {
		return fmt.Errorf("finish list walk %d: %w", walkID, err)
	}
	return nil
}

// StopWalk records why a walk ended before it finished. The next walk of
// the target then goes on past known links until it meets settled ones.
func (s *Store) StopWalk(ctx context.Context, walkID int64, reason string) error {
	_, err := s.conn().exec(ctx, `UPDATE list_walk SET error_msg = ? WHERE id = ? AND finished_at IS NULL`, reason, walkID)
	if err != nil {
		return fmt.Errorf("list walk %d: %w", walkID, err)
	}
	return nil
}

// LastWalks returns the latest walks of a target, newest first.
func (s *Store) LastWalks(ctx context.Context, targetID int64, limit int) ([]Walk, error) {
	rows, err := s.conn().query(ctx, `SELECT `+walkColumns+` FROM list_walk WHERE target_id = ? ORDER BY id DESC LIMIT ?`,
		targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("list walks of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []Walk
	for rows.Next() {
		w, err := scanWalk(rows)
		if err != nil {
			return nil, fmt.Errorf("list walks of target %d: %w", targetID, err)
		}
		out = append(out, *w)
	}
	return out, rows.Err()
}

// Discovered is an article link as a list page showed it.
type Discovered struct {
	URL          string // normalised
	URLHash      string
	NativePostID string
	Item         json.RawMessage
}

// Discover records the links of one list page for a target, in one
// transaction, before any of them is fetched. A link seen before keeps its
// state; its list item is refreshed. It returns, by url_hash, the walk that
// first discovered each link (walkID for the new ones).
func (s *Store) Discover(ctx context.Context, targetID, walkID int64, items []Discovered) (map[string]int64, error) {
	out := make(map[string]int64, len(items))
	err := s.WithTx(ctx, func(tx *Tx) error {
		now := s.ts(s.now())
		for _, d := range items {
			if _, dup := out[d.URLHash]; dup {
				continue
			}
			item := d.Item
			if len(item) == 0 {
				item = json.RawMessage(`{}`)
			}
			var walk int64
			err := tx.c.queryRow(ctx, `SELECT discovered_walk FROM frontier WHERE target_id = ? AND url_hash = ?`,
				targetID, d.URLHash).Scan(&walk)
			switch notFound(err) {
			case nil:
				if _, err := tx.c.exec(ctx, `UPDATE frontier SET item_json = ?, last_seen_at = ?,
					native_post_id = coalesce(?, native_post_id) WHERE target_id = ? AND url_hash = ?`,
					string(item), now, nullStr(d.NativePostID), targetID, d.URLHash); err != nil {
					return err
				}
			case ErrNotFound:
				walk = walkID
				if _, err := tx.c.exec(ctx, `INSERT INTO frontier (target_id, url, url_hash, native_post_id, item_json,
					state, discovered_walk, discovered_at, last_seen_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					targetID, d.URL, d.URLHash, nullStr(d.NativePostID), string(item), FrontierNew, walkID, now, now, now); err != nil {
					return err
				}
			default:
				return err
			}
			out[d.URLHash] = walk
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record links of target %d: %w", targetID, err)
	}
	return out, nil
}

// DueFrontier returns a target's links to fetch at now: those never
// fetched, in the order they were discovered, then failed and disallowed
// ones whose retry time has come.
func (s *Store) DueFrontier(ctx context.Context, targetID int64, now time.Time, limit int) ([]FrontierEntry, error) {
	rows, err := s.conn().query(ctx, `SELECT `+frontierColumns+` FROM frontier
		WHERE target_id = ? AND (state = 'new' OR (state IN ('failed', 'disallowed') AND
			(next_attempt_at IS NULL OR next_attempt_at <= ?)))
		ORDER BY CASE WHEN state = 'new' THEN 0 ELSE 1 END, id LIMIT ?`, targetID, s.ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due links of target %d: %w", targetID, err)
	}
	return scanFrontierRows(rows)
}

// DueRechecks returns up to limit stored, ready articles of a target whose
// url_state says they are due for a conditional re-check at now, oldest
// check first. This is how edits to old articles are found without paging
// whole lists again.
func (s *Store) DueRechecks(ctx context.Context, targetID int64, now time.Time, limit int) ([]FrontierEntry, error) {
	rows, err := s.conn().query(ctx, `SELECT f.id, f.target_id, f.url, f.url_hash, f.native_post_id, f.item_json, f.state,
		f.attempts, f.error_class, f.last_error, f.next_attempt_at, f.discovered_walk, f.article_id, f.discovered_at,
		f.last_seen_at, f.updated_at FROM frontier f
		JOIN article a ON a.id = f.article_id
		LEFT JOIN url_state u ON u.url_hash = f.url_hash
		WHERE f.target_id = ? AND f.state = 'fetched' AND a.status = 'ready'
			AND (u.next_check_at IS NULL OR u.next_check_at <= ?)
		ORDER BY u.last_checked_at NULLS FIRST, f.id LIMIT ?`, targetID, s.ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due re-checks of target %d: %w", targetID, err)
	}
	return scanFrontierRows(rows)
}

func scanFrontierRows(rows *sql.Rows) ([]FrontierEntry, error) {
	defer rows.Close()
	var out []FrontierEntry
	for rows.Next() {
		e, err := scanFrontier(rows)
		if err != nil {
			return nil, fmt.Errorf("frontier: %w", err)
		}
		out = append(out, *e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("frontier: %w", err)
	}
	return out, nil
}

// FrontierEntries returns every link of a target (all targets when
// targetID is 0), by id.
func (s *Store) FrontierEntries(ctx context.Context, targetID int64) ([]FrontierEntry, error) {
	rows, err := s.conn().query(ctx, `SELECT `+frontierColumns+` FROM frontier WHERE ? = 0 OR target_id = ? ORDER BY id`,
		targetID, targetID)
	if err != nil {
		return nil, fmt.Errorf("frontier of target %d: %w", targetID, err)
	}
	return scanFrontierRows(rows)
}

// FrontierCounts counts a target's links by state.
func (s *Store) FrontierCounts(ctx context.Context, targetID int64) (map[string]int, error) {
	rows, err := s.conn().query(ctx, `SELECT state, count(*) FROM frontier WHERE target_id = ? GROUP BY state`, targetID)
	if err != nil {
		return nil, fmt.Errorf("frontier counts of target %d: %w", targetID, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("frontier counts: %w", err)
		}
		out[state] = n
	}
	return out, rows.Err()
}

// FrontierMark is what one attempt at a link came to.
type FrontierMark struct {
	State      string
	ErrorClass string
	Error      string
	// NextAttemptAt is when a failed or disallowed link is tried again.
	NextAttemptAt *time.Time
	// Attempt counts this as an attempt (a failure); a success resets the
	// count.
	Attempt bool
}

// MarkFrontier moves a link to the state of m.
func (s *Store) MarkFrontier(ctx context.Context, id int64, m FrontierMark) error {
	return s.WithTx(ctx, func(tx *Tx) error { return tx.markFrontier(ctx, id, m, nil) })
}

func (t *Tx) markFrontier(ctx context.Context, id int64, m FrontierMark, articleID *int64) error {
	attempts := `0`
	if m.Attempt {
		attempts = `attempts + 1`
	}
	var art any
	if articleID != nil {
		art = *articleID
	}
	_, err := t.c.exec(ctx, `UPDATE frontier SET state = ?, attempts = `+attempts+`, error_class = ?, last_error = ?,
		next_attempt_at = ?, article_id = coalesce(?, article_id), updated_at = ? WHERE id = ?`,
		m.State, nullStr(m.ErrorClass), nullStr(m.Error), t.s.tsPtr(m.NextAttemptAt), art, t.s.ts(t.s.now()), id)
	if err != nil {
		return fmt.Errorf("frontier entry %d: %w", id, err)
	}
	return nil
}

// DueRetries returns up to limit links of a target whose last attempt
// failed and whose retry time has come at now, soonest retry first.
func (s *Store) DueRetries(ctx context.Context, targetID int64, now time.Time, limit int) ([]FrontierEntry, error) {
	rows, err := s.conn().query(ctx, `SELECT `+frontierColumns+` FROM frontier
		WHERE target_id = ? AND state = 'failed' AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
		ORDER BY next_attempt_at NULLS FIRST, id LIMIT ?`, targetID, s.ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due retries of target %d: %w", targetID, err)
	}
	return scanFrontierRows(rows)
}

// WaitingRetry is an article link whose last attempt failed: the article
// is missing until its retry brings it.
type WaitingRetry struct {
	TargetID      int64      `json:"-"`
	TargetCode    string     `json:"target_code"`
	SiteCode      string     `json:"site_code"`
	URL           string     `json:"url"`
	Attempts      int        `json:"failed_attempts"`
	ErrorClass    string     `json:"error_class"`
	Error         string     `json:"error"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// WaitingRetries returns up to limit of the links whose last attempt
// failed, soonest retry first, and how many there are in all: those of one
// target, or with targetID 0 those of every enabled target (its site and
// site department enabled too).
func (s *Store) WaitingRetries(ctx context.Context, targetID int64, limit int) ([]WaitingRetry, int, error) {
	where := `FROM frontier f
		JOIN crawl_target t ON t.id = f.target_id
		JOIN crawl_site s ON s.id = t.site_id
		LEFT JOIN site_department d ON d.id = t.site_department_id
		WHERE f.state = 'failed' AND `
	args := []any{targetID}
	if targetID == 0 {
		where += `t.enabled = ? AND s.enabled = ? AND (d.id IS NULL OR d.enabled = ?)`
		args = []any{true, true, true}
	} else {
		where += `f.target_id = ?`
	}
	var total int
	if err := s.conn().queryRow(ctx, `SELECT count(*) `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("links waiting for a retry: %w", err)
	}
	if total == 0 || limit <= 0 {
		return []WaitingRetry{}, total, nil
	}
	rows, err := s.conn().query(ctx, `SELECT f.target_id, t.target_code, s.site_code, f.url, f.attempts, f.error_class,
		f.last_error, f.next_attempt_at `+where+` ORDER BY f.next_attempt_at NULLS FIRST, f.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("links waiting for a retry: %w", err)
	}
	defer rows.Close()
	out := []WaitingRetry{}
	for rows.Next() {
		var w WaitingRetry
		if err := rows.Scan(&w.TargetID, &w.TargetCode, &w.SiteCode, &w.URL, &w.Attempts, strCol{&w.ErrorClass},
			strCol{&w.Error}, nullTimeCol{&w.NextAttemptAt}); err != nil {
			return nil, 0, fmt.Errorf("links waiting for a retry: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("links waiting for a retry: %w", err)
	}
	return out, total, nil
}

// RetryFailedNow makes every failed link of the targets due at now (the
// failure count is kept, so a link that fails again waits as long as it
// would have) and returns how many there are.
func (s *Store) RetryFailedNow(ctx context.Context, targetIDs []int64, now time.Time) (int, error) {
	if len(targetIDs) == 0 {
		return 0, nil
	}
	args := []any{s.ts(now)}
	for _, id := range targetIDs {
		args = append(args, id)
	}
	res, err := s.conn().exec(ctx, `UPDATE frontier SET next_attempt_at = ?
		WHERE state = 'failed' AND target_id IN (`+placeholders(len(targetIDs))+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("make failed links due: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("make failed links due: %w", err)
	}
	return int(n), nil
}
