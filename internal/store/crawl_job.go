package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// States of a crawl job, as Firecrawl's clients read them.
const (
	CrawlScraping  = "scraping"
	CrawlCompleted = "completed"
	CrawlFailed    = "failed"
	CrawlCancelled = "cancelled"
)

// States of a page in a crawl job's frontier.
const (
	PageQueued   = "queued"   // found, waiting for its turn
	PageFetching = "fetching" // claimed by the job's worker, nothing sent yet
	PageSent     = "sent"     // the request left; its answer is not stored yet
	PageDone     = "done"     // answered; its document is kept
	PageFailed   = "failed"   // asked, and it failed (or its answer was lost)
	PageRedirect = "redirect" // asked, and it redirected (its target is a page of its own)
	PageRefused  = "refused"  // refused before anything was sent (SSRF guard, breaker)
	PageRobots   = "robots"   // refused by robots.txt before anything was sent
)

// ErrCrawlJobGone is a write of a crawl job's worker refused because the
// job is no longer its to work: cancelled, finished, or taken up by a
// later attempt.
var ErrCrawlJobGone = errors.New("crawl job no longer worked by this attempt")

// CrawlJob is one crawl job of the acquisition API. Options is the
// checked request as JSON (internal/acquire reads and writes it).
type CrawlJob struct {
	ID        string
	Owner     string
	APIKeyID  *int64
	URL       string
	Options   string
	State     string
	Error     string
	ErrorCode string
	Limit     int
	Asked     int
	Completed int
	Credits   int64
	Started   bool
	Attempt   int
	Created   time.Time
	Updated   time.Time
	Finished  *time.Time
	Expires   time.Time
	// Queued counts the pages waiting (queued or claimed); filled by
	// CrawlJob.
	Queued int
}

// CrawlPage is one URL of a crawl job's frontier.
type CrawlPage struct {
	URL      string
	Seq      int64
	Depth    int
	State    string
	Status   int
	Code     string
	Error    string
	Document string // JSON, for a done page
	DoneNo   int
	Updated  time.Time
}

// CrawlLink is a URL found in a job's scope, with its depth.
type CrawlLink struct {
	URL   string
	Depth int
}

// CreateCrawlJob records j as scraping with its first URL queued.
func (s *Store) CreateCrawlJob(ctx context.Context, j *CrawlJob) error {
	now := s.now()
	return s.WithTx(ctx, func(tx *Tx) error {
		if _, err := tx.c.exec(ctx, `INSERT INTO crawl_job (id, owner, api_key_id, url, options, state, page_limit,
			next_seq, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, 'scraping', ?, 2, ?, ?, ?)`,
			j.ID, j.Owner, j.APIKeyID, j.URL, j.Options, j.Limit, s.ts(j.Created), s.ts(now), s.ts(j.Expires)); err != nil {
			return fmt.Errorf("create crawl job: %w", err)
		}
		if _, err := tx.c.exec(ctx, `INSERT INTO crawl_job_page (job_id, url, seq, depth, state, updated_at)
			VALUES (?, ?, 1, 0, 'queued', ?)`, j.ID, j.URL, s.ts(now)); err != nil {
			return fmt.Errorf("create crawl job: %w", err)
		}
		j.State, j.Updated = CrawlScraping, now
		return nil
	})
}

const crawlJobCols = `id, owner, api_key_id, url, options, state, error, error_code, page_limit, asked, completed,
	credits, started, attempt, created_at, updated_at, finished_at, expires_at`

func scanCrawlJob(sc interface{ Scan(...any) error }) (*CrawlJob, error) {
	var j CrawlJob
	var key sql.NullInt64
	var started int
	if err := sc.Scan(&j.ID, &j.Owner, &key, &j.URL, &j.Options, &j.State, &j.Error, &j.ErrorCode, &j.Limit, &j.Asked,
		&j.Completed, &j.Credits, &started, &j.Attempt, timeCol{&j.Created}, timeCol{&j.Updated},
		nullTimeCol{&j.Finished}, timeCol{&j.Expires}); err != nil {
		return nil, err
	}
	if key.Valid {
		j.APIKeyID = &key.Int64
	}
	j.Started = started == 1
	return &j, nil
}

// CrawlJob returns job id with its count of waiting pages, ErrNotFound
// when there is none.
func (s *Store) CrawlJob(ctx context.Context, id string) (*CrawlJob, error) {
	j, err := scanCrawlJob(s.conn().queryRow(ctx, `SELECT `+crawlJobCols+` FROM crawl_job WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("crawl job %s: %w", id, notFound(err))
	}
	if err := s.conn().queryRow(ctx, `SELECT count(*) FROM crawl_job_page WHERE job_id = ? AND state IN ('queued', 'fetching')`,
		id).Scan(&j.Queued); err != nil {
		return nil, fmt.Errorf("crawl job %s: %w", id, err)
	}
	return j, nil
}

// BeginCrawlJobAttempt makes the caller the owner of job id's work and
// returns its attempt number (0, with no error, when the job is no longer
// scraping). What an earlier attempt left half done is settled first: a
// page claimed but not sent goes back to the queue; a page whose request
// left but whose answer was never stored is failed with interrupted as
// its error, and is never asked again. Such a page gave the user nothing,
// so it no longer counts against the job's limit: the job asks for
// another page in its place. It returns how many were failed so.
func (s *Store) BeginCrawlJobAttempt(ctx context.Context, id, interrupted string) (attempt, lost int, err error) {
	now := s.now()
	err = s.WithTx(ctx, func(tx *Tx) error {
		var state string
		if err := tx.c.queryRow(ctx, `SELECT state, attempt FROM crawl_job WHERE id = ?`, id).Scan(&state, &attempt); err != nil {
			return notFound(err)
		}
		if state != CrawlScraping {
			attempt = 0
			return nil
		}
		attempt++
		if _, err := tx.c.exec(ctx, `UPDATE crawl_job SET attempt = ?, updated_at = ? WHERE id = ?`, attempt, s.ts(now), id); err != nil {
			return err
		}
		if _, err := tx.c.exec(ctx, `UPDATE crawl_job_page SET state = 'queued', updated_at = ? WHERE job_id = ? AND state = 'fetching'`,
			s.ts(now), id); err != nil {
			return err
		}
		res, err := tx.c.exec(ctx, `UPDATE crawl_job_page SET state = 'failed', code = 'INTERRUPTED', error = ?, updated_at = ?
			WHERE job_id = ? AND state = 'sent'`, interrupted, s.ts(now), id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		lost = int(n)
		if lost == 0 {
			return nil
		}
		_, err = tx.c.exec(ctx, `UPDATE crawl_job SET asked = asked - ? WHERE id = ?`, lost, id)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("begin crawl job %s: %w", id, err)
	}
	return attempt, lost, nil
}

// fenceCrawlJob fails with ErrCrawlJobGone unless job id is scraping and
// worked by attempt.
func fenceCrawlJob(ctx context.Context, c conn, id string, attempt int) (*CrawlJob, error) {
	q := `SELECT ` + crawlJobCols + ` FROM crawl_job WHERE id = ?`
	if c.s.dialect == DialectPostgres {
		q += ` FOR UPDATE`
	}
	j, err := scanCrawlJob(c.queryRow(ctx, q, id))
	if err != nil {
		return nil, notFound(err)
	}
	if j.State != CrawlScraping || j.Attempt != attempt {
		return j, ErrCrawlJobGone
	}
	return j, nil
}

// MarkCrawlJobStarted records that job id's start (its "started" webhook,
// its sitemap) is done, and queues the links found by it and adds the
// requests it was charged.
func (s *Store) MarkCrawlJobStarted(ctx context.Context, id string, attempt int, links []CrawlLink, credits int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		if _, err := fenceCrawlJob(ctx, tx.c, id, attempt); err != nil {
			return err
		}
		if err := tx.queueCrawlLinks(ctx, id, links); err != nil {
			return err
		}
		_, err := tx.c.exec(ctx, `UPDATE crawl_job SET started = 1, credits = credits + ?, updated_at = ? WHERE id = ?`,
			credits, s.ts(s.now()), id)
		return err
	})
}

// MaxCrawlFrontier bounds the URLs one crawl job keeps (asked or waiting,
// its start URL included): the links found beyond it are not kept, so a
// site with endless links (a calendar, a search) cannot fill the database.
const MaxCrawlFrontier = 10000

// queueCrawlLinks adds the links not in job id's frontier yet, in order,
// while the frontier holds fewer than MaxCrawlFrontier URLs.
func (t *Tx) queueCrawlLinks(ctx context.Context, id string, links []CrawlLink) error {
	if len(links) == 0 {
		return nil
	}
	var next int64
	if err := t.c.queryRow(ctx, `SELECT next_seq FROM crawl_job WHERE id = ?`, id).Scan(&next); err != nil {
		return err
	}
	var kept int
	if err := t.c.queryRow(ctx, `SELECT count(*) FROM crawl_job_page WHERE job_id = ?`, id).Scan(&kept); err != nil {
		return err
	}
	now := t.s.ts(t.s.now())
	for _, l := range links {
		if kept >= MaxCrawlFrontier {
			break
		}
		res, err := t.c.exec(ctx, `INSERT INTO crawl_job_page (job_id, url, seq, depth, state, updated_at)
			VALUES (?, ?, ?, ?, 'queued', ?) ON CONFLICT (job_id, url) DO NOTHING`, id, l.URL, next, l.Depth, now)
		if err != nil {
			return fmt.Errorf("queue %s: %w", l.URL, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			kept++
		}
		next++
	}
	_, err := t.c.exec(ctx, `UPDATE crawl_job SET next_seq = ? WHERE id = ?`, next, id)
	return err
}

// ClaimCrawlPage takes the first queued page of job id (fetching), or
// returns ErrNotFound when none waits. It returns the job as it is now.
func (s *Store) ClaimCrawlPage(ctx context.Context, id string, attempt int) (*CrawlJob, *CrawlPage, error) {
	var job *CrawlJob
	var p CrawlPage
	err := s.WithTx(ctx, func(tx *Tx) error {
		j, err := fenceCrawlJob(ctx, tx.c, id, attempt)
		job = j
		if err != nil {
			return err
		}
		err = tx.c.queryRow(ctx, `SELECT url, seq, depth FROM crawl_job_page WHERE job_id = ? AND state = 'queued'
			ORDER BY seq LIMIT 1`, id).Scan(&p.URL, &p.Seq, &p.Depth)
		if err != nil {
			return notFound(err)
		}
		p.State = PageFetching
		_, err = tx.c.exec(ctx, `UPDATE crawl_job_page SET state = 'fetching', updated_at = ? WHERE job_id = ? AND url = ?`,
			s.ts(s.now()), id, p.URL)
		return err
	})
	if err != nil {
		return job, nil, fmt.Errorf("claim a page of crawl job %s: %w", id, err)
	}
	return job, &p, nil
}

// MarkCrawlPageSent records, before its request leaves, that page url of
// job id is asked of its site: it counts against the job's limit from now
// on (unless its answer is lost with this process: see
// BeginCrawlJobAttempt) and is never asked again, whatever happens to this
// process. Counted in the same transaction as the job's row is fenced, so
// two processes can never both take the last slot under the limit.
func (s *Store) MarkCrawlPageSent(ctx context.Context, id string, attempt int, url string) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		j, err := fenceCrawlJob(ctx, tx.c, id, attempt)
		if err != nil {
			return err
		}
		if j.Asked >= j.Limit {
			return fmt.Errorf("crawl job %s: its limit of %d pages is reached", id, j.Limit)
		}
		now := s.ts(s.now())
		res, err := tx.c.exec(ctx, `UPDATE crawl_job_page SET state = 'sent', updated_at = ? WHERE job_id = ? AND url = ? AND state = 'fetching'`,
			now, id, url)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrCrawlJobGone
		}
		_, err = tx.c.exec(ctx, `UPDATE crawl_job SET asked = asked + 1, updated_at = ? WHERE id = ?`, now, id)
		return err
	})
}

// CrawlPageOutcome is what became of a claimed page.
type CrawlPageOutcome struct {
	State    string // PageDone, PageFailed, PageRedirect, PageRefused, PageRobots, or PageQueued (given back unsent)
	Status   int
	Code     string
	Error    string
	Document string
	// Credits are the requests charged for it.
	Credits int64
	// Links are the links found on it, in the job's scope, to queue.
	Links []CrawlLink
}

// FinishCrawlPage records page url's outcome and queues its links.
func (s *Store) FinishCrawlPage(ctx context.Context, id string, attempt int, url string, o CrawlPageOutcome) error {
	err := s.WithTx(ctx, func(tx *Tx) error {
		j, err := fenceCrawlJob(ctx, tx.c, id, attempt)
		if err != nil && !(errors.Is(err, ErrCrawlJobGone) && j != nil && j.State == CrawlCancelled && j.Attempt == attempt) {
			return err
		}
		// A page answered after its job was cancelled is still kept:
		// it was asked for and charged.
		now := s.ts(s.now())
		var doneNo any
		var doc any
		switch o.State {
		case PageDone:
			doneNo, doc = j.Completed+1, o.Document
			if _, err := tx.c.exec(ctx, `UPDATE crawl_job SET completed = completed + 1 WHERE id = ?`, id); err != nil {
				return err
			}
		case PageRedirect:
			// A hop, not a page: its slot under the limit goes to the
			// page it leads to.
			if _, err := tx.c.exec(ctx, `UPDATE crawl_job SET asked = asked - 1 WHERE id = ? AND asked > completed`, id); err != nil {
				return err
			}
		}
		if _, err := tx.c.exec(ctx, `UPDATE crawl_job_page SET state = ?, status = ?, code = ?, error = ?, document = ?,
			done_no = ?, updated_at = ? WHERE job_id = ? AND url = ?`, o.State, o.Status, clipRunes(o.Code, 50),
			clipRunes(o.Error, 2000), doc, doneNo, now, id, url); err != nil {
			return err
		}
		if _, err := tx.c.exec(ctx, `UPDATE crawl_job SET credits = credits + ?, updated_at = ? WHERE id = ?`, o.Credits, now, id); err != nil {
			return err
		}
		if j.State != CrawlScraping {
			return nil
		}
		return tx.queueCrawlLinks(ctx, id, o.Links)
	})
	if err != nil {
		return fmt.Errorf("record page %s of crawl job %s: %w", url, id, err)
	}
	return nil
}

// FinishCrawlJob ends job id in state with an error (for failed), if it
// is still scraping under attempt.
func (s *Store) FinishCrawlJob(ctx context.Context, id string, attempt int, state, code, msg string) error {
	now := s.now()
	res, err := s.conn().exec(ctx, `UPDATE crawl_job SET state = ?, error_code = ?, error = ?, finished_at = ?, updated_at = ?
		WHERE id = ? AND state = 'scraping' AND attempt = ?`, state, code, clipRunes(msg, 2000), s.ts(now), s.ts(now), id, attempt)
	if err != nil {
		return fmt.Errorf("finish crawl job %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrCrawlJobGone
	}
	return nil
}

// CancelCrawlJob cancels job id if it is scraping; a finished job stays
// as it ended. It returns the job as it is after.
func (s *Store) CancelCrawlJob(ctx context.Context, id string) (*CrawlJob, error) {
	now := s.now()
	if _, err := s.conn().exec(ctx, `UPDATE crawl_job SET state = 'cancelled', finished_at = ?, updated_at = ?
		WHERE id = ? AND state = 'scraping'`, s.ts(now), s.ts(now), id); err != nil {
		return nil, fmt.Errorf("cancel crawl job %s: %w", id, err)
	}
	if _, err := s.conn().exec(ctx, `UPDATE crawl_job_page SET state = 'queued' WHERE job_id = ? AND state = 'fetching'`, id); err != nil {
		return nil, fmt.Errorf("cancel crawl job %s: %w", id, err)
	}
	return s.CrawlJob(ctx, id)
}

// CrawlJobDocuments returns up to n answered pages of job id after the
// first skip, in the order they were answered.
func (s *Store) CrawlJobDocuments(ctx context.Context, id string, skip, n int) ([]CrawlPage, error) {
	rows, err := s.conn().query(ctx, `SELECT url, seq, depth, state, status, code, error, document, done_no, updated_at
		FROM crawl_job_page WHERE job_id = ? AND done_no > ? ORDER BY done_no LIMIT ?`, id, skip, n)
	if err != nil {
		return nil, fmt.Errorf("pages of crawl job %s: %w", id, err)
	}
	return scanCrawlPages(rows, id)
}

// CrawlJobProblems returns the pages of job id that failed or were
// refused, in the order found.
func (s *Store) CrawlJobProblems(ctx context.Context, id string) ([]CrawlPage, error) {
	rows, err := s.conn().query(ctx, `SELECT url, seq, depth, state, status, code, error, document, done_no, updated_at
		FROM crawl_job_page WHERE job_id = ? AND state IN ('failed', 'refused', 'robots') ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("errors of crawl job %s: %w", id, err)
	}
	return scanCrawlPages(rows, id)
}

func scanCrawlPages(rows *sql.Rows, id string) ([]CrawlPage, error) {
	defer rows.Close()
	var out []CrawlPage
	for rows.Next() {
		var p CrawlPage
		var doneNo sql.NullInt64
		if err := rows.Scan(&p.URL, &p.Seq, &p.Depth, &p.State, &p.Status, &p.Code, &p.Error, strCol{&p.Document},
			&doneNo, timeCol{&p.Updated}); err != nil {
			return nil, fmt.Errorf("pages of crawl job %s: %w", id, err)
		}
		p.DoneNo = int(doneNo.Int64)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pages of crawl job %s: %w", id, err)
	}
	return out, nil
}

// DeleteExpiredCrawlJobs deletes the crawl jobs that ended and whose
// results expired before now, with their pages, and returns how many. A
// job still scraping is kept whatever its age.
func (s *Store) DeleteExpiredCrawlJobs(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.WithTx(ctx, func(tx *Tx) error {
		const expired = `SELECT id FROM crawl_job WHERE state <> 'scraping' AND expires_at <= ?`
		if _, err := tx.c.exec(ctx, `DELETE FROM crawl_job_page WHERE job_id IN (`+expired+`)`, s.ts(now)); err != nil {
			return err
		}
		res, err := tx.c.exec(ctx, `DELETE FROM crawl_job WHERE state <> 'scraping' AND expires_at <= ?`, s.ts(now))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired crawl jobs: %w", err)
	}
	return int(n), nil
}
