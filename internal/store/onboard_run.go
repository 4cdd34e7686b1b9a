package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// States of an onboarding wizard run.
const (
	OnboardRunning   = "running"
	OnboardDone      = "done"
	OnboardCancelled = "cancelled"
	OnboardFailed    = "failed"
)

// ErrOnboardBusy refuses a new wizard run while the most allowed are
// running, all processes together.
var ErrOnboardBusy = errors.New("too many onboarding wizard runs running")

// onboardStartLock is the advisory lock class that makes the check of the
// running runs and the insert of a new one one step on PostgreSQL ("zhob").
const onboardStartLock = 0x7a686f62

// OnboardRun is one batch of the onboarding wizard. Lines, Sites, Include
// and Drafts are JSON documents of the wizard's own types (internal/onboard
// reads and writes them); the store keeps them as they are.
type OnboardRun struct {
	ID              string
	Owner           string
	Adapter         string
	Lines           json.RawMessage
	LineCount       int
	State           string
	Failure         string
	CancelRequested bool
	Attempt         int
	Started         time.Time
	Finished        *time.Time
	Sites           json.RawMessage
	Include         json.RawMessage
	Drafts          json.RawMessage
	DraftCount      int
}

// OnboardLine is one pasted line's work so far: nil Detection while it is
// being detected, nil Site while its site is being scanned.
type OnboardLine struct {
	Line         int
	Detection    json.RawMessage
	Site         json.RawMessage
	DeptsScanned int
	DeptProblems json.RawMessage
}

// OnboardLimits are the bounds StartOnboardRun keeps.
type OnboardLimits struct {
	// MaxRunning runs may be running at once, everybody's together.
	MaxRunning int
	// Keep runs are kept at most; the oldest finished go first.
	Keep int
	// Expired: runs started before it are gone.
	Expired time.Time
}

// StartOnboardRun records r as running, with the audit entry of its start,
// in one transaction: runs started before lim.Expired are deleted first,
// ErrOnboardBusy refuses it while lim.MaxRunning are running, and the
// oldest finished runs make room beyond lim.Keep.
func (s *Store) StartOnboardRun(ctx context.Context, r *OnboardRun, lim OnboardLimits, audit *AuditEntry) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		if s.dialect == DialectPostgres {
			// SQLite's write transactions take turns already (BEGIN
			// IMMEDIATE); PostgreSQL's would both count two running runs and
			// both insert a third.
			if _, err := tx.c.exec(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))`, onboardStartLock); err != nil {
				return fmt.Errorf("start onboarding run: %w", err)
			}
		}
		if _, err := tx.c.exec(ctx, `DELETE FROM onboard_run_line WHERE run_id IN (SELECT id FROM onboard_run WHERE started_at < ?)`,
			s.ts(lim.Expired)); err != nil {
			return fmt.Errorf("start onboarding run: expire: %w", err)
		}
		if _, err := tx.c.exec(ctx, `DELETE FROM onboard_run WHERE started_at < ?`, s.ts(lim.Expired)); err != nil {
			return fmt.Errorf("start onboarding run: expire: %w", err)
		}
		var running, all int
		if err := tx.c.queryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END), 0), COUNT(*) FROM onboard_run`).
			Scan(&running, &all); err != nil {
			return fmt.Errorf("start onboarding run: count: %w", err)
		}
		if running >= lim.MaxRunning {
			return ErrOnboardBusy
		}
		if extra := all - lim.Keep + 1; extra > 0 {
			old := `SELECT id FROM onboard_run WHERE state <> 'running' ORDER BY started_at, id LIMIT ?`
			if _, err := tx.c.exec(ctx, `DELETE FROM onboard_run_line WHERE run_id IN (`+old+`)`, extra); err != nil {
				return fmt.Errorf("start onboarding run: make room: %w", err)
			}
			if _, err := tx.c.exec(ctx, `DELETE FROM onboard_run WHERE id IN (`+old+`)`, extra); err != nil {
				return fmt.Errorf("start onboarding run: make room: %w", err)
			}
		}
		if _, err := tx.c.exec(ctx, `INSERT INTO onboard_run (id, owner, adapter, lines, line_count, state, started_at)
			VALUES (?, ?, ?, ?, ?, 'running', ?)`, r.ID, clipRunes(r.Owner, 300), clipRunes(r.Adapter, 100), string(r.Lines),
			r.LineCount, s.ts(r.Started)); err != nil {
			return fmt.Errorf("start onboarding run: %w", err)
		}
		r.State = OnboardRunning
		if audit == nil {
			return nil
		}
		return tx.RecordAudit(ctx, audit)
	})
}

const onboardRunCols = `id, owner, adapter, lines, line_count, state, failure, cancel_requested, attempt, started_at,
	finished_at, sites, include, drafts, draft_count`

func scanOnboardRun(sc interface{ Scan(...any) error }) (*OnboardRun, error) {
	var r OnboardRun
	var lines, sites, include, drafts string
	var cancel int
	if err := sc.Scan(&r.ID, &r.Owner, &r.Adapter, &lines, &r.LineCount, &r.State, &r.Failure, &cancel, &r.Attempt,
		timeCol{&r.Started}, nullTimeCol{&r.Finished}, strCol{&sites}, strCol{&include}, strCol{&drafts}, &r.DraftCount); err != nil {
		return nil, err
	}
	r.CancelRequested = cancel == 1
	r.Lines, r.Sites, r.Include, r.Drafts = rawOrNil(lines), rawOrNil(sites), rawOrNil(include), rawOrNil(drafts)
	return &r, nil
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// OnboardRun returns the run id, or ErrNotFound.
func (s *Store) OnboardRun(ctx context.Context, id string) (*OnboardRun, error) {
	r, err := scanOnboardRun(s.conn().queryRow(ctx, `SELECT `+onboardRunCols+` FROM onboard_run WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("onboarding run %s: %w", id, notFound(err))
	}
	return r, nil
}

// OnboardRunsOf lists owner's runs started at or after since, newest first.
func (s *Store) OnboardRunsOf(ctx context.Context, owner string, since time.Time) ([]OnboardRun, error) {
	rows, err := s.conn().query(ctx, `SELECT `+onboardRunCols+` FROM onboard_run WHERE owner = ? AND started_at >= ?
		ORDER BY started_at DESC, id`, owner, s.ts(since))
	if err != nil {
		return nil, fmt.Errorf("onboarding runs: %w", err)
	}
	defer rows.Close()
	var out []OnboardRun
	for rows.Next() {
		r, err := scanOnboardRun(rows)
		if err != nil {
			return nil, fmt.Errorf("onboarding runs: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// OnboardLines returns the run's lines that have been worked on, by line.
func (s *Store) OnboardLines(ctx context.Context, runID string) ([]OnboardLine, error) {
	rows, err := s.conn().query(ctx, `SELECT line, detection, site, depts_scanned, dept_problems FROM onboard_run_line
		WHERE run_id = ? ORDER BY line`, runID)
	if err != nil {
		return nil, fmt.Errorf("onboarding run %s lines: %w", runID, err)
	}
	defer rows.Close()
	var out []OnboardLine
	for rows.Next() {
		var l OnboardLine
		var det, site, problems string
		if err := rows.Scan(&l.Line, strCol{&det}, strCol{&site}, &l.DeptsScanned, strCol{&problems}); err != nil {
			return nil, fmt.Errorf("onboarding run %s lines: %w", runID, err)
		}
		l.Detection, l.Site, l.DeptProblems = rawOrNil(det), rawOrNil(site), rawOrNil(problems)
		out = append(out, l)
	}
	return out, rows.Err()
}

// CancelOnboardRun asks the run's job to stop; it reports whether the run
// was still running.
func (s *Store) CancelOnboardRun(ctx context.Context, id string) (bool, error) {
	res, err := s.conn().exec(ctx, `UPDATE onboard_run SET cancel_requested = 1 WHERE id = ? AND state = 'running'`, id)
	if err != nil {
		return false, fmt.Errorf("cancel onboarding run %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// OnboardCancelRequested reports whether a person asked the run to stop.
func (s *Store) OnboardCancelRequested(ctx context.Context, id string) (bool, error) {
	var v int
	err := s.conn().queryRow(ctx, `SELECT cancel_requested FROM onboard_run WHERE id = ?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil // gone: nobody waits for it
	}
	if err != nil {
		return false, fmt.Errorf("onboarding run %s: %w", id, err)
	}
	return v == 1, nil
}

// BeginOnboardAttempt starts a new attempt at the running run's work and
// returns its number: from now on only its writes count, an earlier
// attempt's are ignored. The lines it will scan again start from nothing.
// It returns 0 when the run is over (or gone).
func (s *Store) BeginOnboardAttempt(ctx context.Context, id string) (int, error) {
	attempt := 0
	err := s.WithTx(ctx, func(tx *Tx) error {
		err := tx.c.queryRow(ctx, `UPDATE onboard_run SET attempt = attempt + 1 WHERE id = ? AND state = 'running'
			RETURNING attempt`, id).Scan(&attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.c.exec(ctx, `UPDATE onboard_run_line SET depts_scanned = 0, dept_problems = NULL
			WHERE run_id = ? AND site IS NULL`, id)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("onboarding run %s: begin an attempt: %w", id, err)
	}
	return attempt, nil
}

// ownedBy is the guard of every write of a run's work: the run is running
// and attempt owns it.
const ownedBy = `EXISTS (SELECT 1 FROM onboard_run WHERE id = ? AND attempt = ? AND state = 'running')`

// RecordOnboardDetection keeps a line's detection, for attempt.
func (s *Store) RecordOnboardDetection(ctx context.Context, id string, attempt, line int, detection json.RawMessage) error {
	_, err := s.conn().exec(ctx, `INSERT INTO onboard_run_line (run_id, line, detection)
		SELECT ?, ?, ? WHERE `+ownedBy+`
		ON CONFLICT (run_id, line) DO UPDATE SET detection = excluded.detection`,
		id, line, string(detection), id, attempt)
	if err != nil {
		return fmt.Errorf("onboarding run %s line %d: %w", id, line, err)
	}
	return nil
}

// RecordOnboardDepts keeps how many depts of a line's site attempt has
// scanned, and their problems.
func (s *Store) RecordOnboardDepts(ctx context.Context, id string, attempt, line, scanned int, problems json.RawMessage) error {
	_, err := s.conn().exec(ctx, `UPDATE onboard_run_line SET depts_scanned = ?, dept_problems = ?
		WHERE run_id = ? AND line = ? AND site IS NULL AND `+ownedBy,
		scanned, jsonArg(problems), id, line, id, attempt)
	if err != nil {
		return fmt.Errorf("onboarding run %s line %d: %w", id, line, err)
	}
	return nil
}

// RecordOnboardSite keeps a line's scanned site, for attempt.
func (s *Store) RecordOnboardSite(ctx context.Context, id string, attempt, line int, site json.RawMessage) error {
	_, err := s.conn().exec(ctx, `UPDATE onboard_run_line SET site = ? WHERE run_id = ? AND line = ? AND `+ownedBy,
		string(site), id, line, id, attempt)
	if err != nil {
		return fmt.Errorf("onboarding run %s line %d: %w", id, line, err)
	}
	return nil
}

// FinishOnboardRun records the outcome of attempt's work: the state, the
// failure in words, the sites with their suggestions and which are
// included. It reports false when attempt no longer owns the run.
func (s *Store) FinishOnboardRun(ctx context.Context, id string, attempt int, state, failure string,
	sites, include json.RawMessage, finished time.Time) (bool, error) {
	res, err := s.conn().exec(ctx, `UPDATE onboard_run SET state = ?, failure = ?, sites = ?, include = ?, finished_at = ?
		WHERE id = ? AND attempt = ? AND state = 'running'`,
		state, failure, jsonArg(sites), jsonArg(include), s.ts(finished), id, attempt)
	if err != nil {
		return false, fmt.Errorf("finish onboarding run %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// FailOnboardRun ends a running run as failed, whatever attempt owns it:
// its job could not be queued, or it has been running far longer than any
// run may.
func (s *Store) FailOnboardRun(ctx context.Context, id, failure string, finished time.Time) error {
	if _, err := s.conn().exec(ctx, `UPDATE onboard_run SET state = 'failed', failure = ?, finished_at = ?
		WHERE id = ? AND state = 'running'`, failure, s.ts(finished), id); err != nil {
		return fmt.Errorf("fail onboarding run %s: %w", id, err)
	}
	return nil
}

// SaveOnboardChoices keeps a finished run's sites as the person edited
// them, which are included, and the drafts made from them (nil: none).
func (s *Store) SaveOnboardChoices(ctx context.Context, id string, sites, include, drafts json.RawMessage, draftCount int) error {
	if _, err := s.conn().exec(ctx, `UPDATE onboard_run SET sites = ?, include = ?, drafts = ?, draft_count = ?
		WHERE id = ? AND state <> 'running'`, jsonArg(sites), jsonArg(include), jsonArg(drafts), draftCount, id); err != nil {
		return fmt.Errorf("save onboarding run %s: %w", id, err)
	}
	return nil
}
