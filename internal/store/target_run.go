package store

import (
	"context"
	"fmt"
	"time"
)

// Outcomes of a target run (target_run.outcome).
const (
	RunOK          = "ok"          // the target was crawled and every article stored
	RunFailed      = "failed"      // the target, or at least one of its articles, failed
	RunInterrupted = "interrupted" // the run was stopped before the target was done
	RunBlocked     = "blocked"     // robots.txt forbids the column: zhizhi obeyed, nothing to fix here
)

// TargetRun is one crawl of one target, as target_run records it.
type TargetRun struct {
	ID         int64     `json:"id"`
	TargetID   int64     `json:"target_id"`
	Runner     string    `json:"runner"` // who ran it: "cli", a serve worker's id
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Outcome    string    `json:"outcome"` // RunOK, RunFailed, RunInterrupted, RunBlocked
	Created    int       `json:"created"`
	Updated    int       `json:"updated"`
	Unchanged  int       `json:"unchanged"`
	Failed     int       `json:"failed"`
	Pages      int       `json:"pages"`
	Bytes      int64     `json:"bytes"`
	Error      string    `json:"error,omitempty"` // why the run failed; empty when it did not
}

// maxRunError bounds the error text kept per run: a run whose every
// article failed would otherwise store every problem's text.
const maxRunError = 4000

// RecordTargetRun inserts r and sets its ID. It runs outside any
// transaction, so the record of a finished run stays whatever happens next.
func (s *Store) RecordTargetRun(ctx context.Context, r *TargetRun) error {
	if len(r.Error) > maxRunError {
		cut := maxRunError
		for cut > 0 && r.Error[cut]&0xC0 == 0x80 { // keep UTF-8 whole
			cut--
		}
		r.Error = r.Error[:cut] + "…"
	}
	id, err := s.conn().insertID(ctx, `INSERT INTO target_run (target_id, runner, started_at, finished_at, outcome,
		created, updated, unchanged, failed, pages, bytes, error_msg)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.TargetID, r.Runner, s.ts(r.StartedAt), s.ts(r.FinishedAt), r.Outcome,
		r.Created, r.Updated, r.Unchanged, r.Failed, r.Pages, r.Bytes, nullStr(r.Error))
	if err != nil {
		return fmt.Errorf("record run of target %d: %w", r.TargetID, err)
	}
	r.ID = id
	return nil
}

const targetRunColumns = `r.id, r.target_id, r.runner, r.started_at, r.finished_at, r.outcome,
	r.created, r.updated, r.unchanged, r.failed, r.pages, r.bytes, r.error_msg`

func scanTargetRun(sc interface{ Scan(...any) error }) (TargetRun, error) {
	var r TargetRun
	err := sc.Scan(&r.ID, &r.TargetID, &r.Runner, timeCol{&r.StartedAt}, timeCol{&r.FinishedAt}, &r.Outcome,
		&r.Created, &r.Updated, &r.Unchanged, &r.Failed, &r.Pages, &r.Bytes, strCol{&r.Error})
	return r, err
}

// LastTargetRuns returns the newest run of every target that has one, by
// target id.
func (s *Store) LastTargetRuns(ctx context.Context) (map[int64]TargetRun, error) {
	rows, err := s.conn().query(ctx, `SELECT `+targetRunColumns+` FROM target_run r
		JOIN (SELECT target_id, MAX(id) AS id FROM target_run GROUP BY target_id) last ON last.id = r.id`)
	if err != nil {
		return nil, fmt.Errorf("last target runs: %w", err)
	}
	defer rows.Close()
	out := map[int64]TargetRun{}
	for rows.Next() {
		r, err := scanTargetRun(rows)
		if err != nil {
			return nil, fmt.Errorf("last target runs: %w", err)
		}
		out[r.TargetID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last target runs: %w", err)
	}
	return out, nil
}

// TargetRuns returns the runs of one target, newest first, at most limit
// (default 20).
func (s *Store) TargetRuns(ctx context.Context, targetID int64, limit int) ([]TargetRun, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.conn().query(ctx, `SELECT `+targetRunColumns+` FROM target_run r
		WHERE r.target_id = ? ORDER BY r.id DESC LIMIT ?`, targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("runs of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []TargetRun
	for rows.Next() {
		r, err := scanTargetRun(rows)
		if err != nil {
			return nil, fmt.Errorf("runs of target %d: %w", targetID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs of target %d: %w", targetID, err)
	}
	return out, nil
}
