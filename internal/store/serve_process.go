package store

import (
	"context"
	"fmt"
	"time"
)

// The serve processes sharing a database heartbeat in serve_process, so
// that the others can tell a dead one within seconds and take back the jobs
// it was running. Every time in these rows is the database's clock on
// PostgreSQL (processes on several machines compare them) and the store's
// clock on SQLite (one machine).

// ServeProcess is one registered serve process.
type ServeProcess struct {
	ID        string // its River client id, as in river_job.attempted_by
	Host      string
	PID       int
	StartedAt time.Time
	BeatAt    time.Time
	ClaimedBy string // the process taking back its jobs ("" for none)
}

// dbClock is the clock the heartbeat rows are written and judged with.
func (s *Store) dbClock(ctx context.Context) (time.Time, error) {
	if s.dialect != DialectPostgres {
		return s.now(), nil
	}
	var t time.Time
	if err := s.db.QueryRowContext(ctx, `SELECT now()`).Scan(&t); err != nil {
		return time.Time{}, err
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// RegisterServeProcess records (or renews, clearing any claim on it) the
// process id with a heartbeat of now. A process registers before it takes
// its first job, so every job it runs maps to a row.
func (s *Store) RegisterServeProcess(ctx context.Context, id, host string, pid int) error {
	now, err := s.dbClock(ctx)
	if err != nil {
		return fmt.Errorf("register serve process %s: %w", id, err)
	}
	if _, err := s.conn().exec(ctx, `INSERT INTO serve_process (id, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at, claimed_by = NULL, claimed_at = NULL`,
		id, host, pid, s.ts(now), s.ts(now)); err != nil {
		return fmt.Errorf("register serve process %s: %w", id, err)
	}
	return nil
}

// BeatServeProcess renews the heartbeat of process id. alive is false when
// its row is gone or claimed: the others took it for dead (it was paused,
// cut off or too slow to beat) and are taking back, or took back, its jobs.
// The caller registers again.
func (s *Store) BeatServeProcess(ctx context.Context, id string) (alive bool, err error) {
	now, err := s.dbClock(ctx)
	if err != nil {
		return false, fmt.Errorf("heartbeat of serve process %s: %w", id, err)
	}
	res, err := s.conn().exec(ctx, `UPDATE serve_process SET beat_at = ? WHERE id = ? AND claimed_by IS NULL`, s.ts(now), id)
	if err != nil {
		return false, fmt.Errorf("heartbeat of serve process %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("heartbeat of serve process %s: %w", id, err)
	}
	return n == 1, nil
}

// ClaimDeadServeProcesses claims, for process by, every other process whose
// last heartbeat is older than deadAfter and that nobody has claimed in
// that time (a claimant may itself die before it finishes), and returns
// their ids. Of several processes sweeping at once each dead one goes to
// exactly one.
func (s *Store) ClaimDeadServeProcesses(ctx context.Context, by string, deadAfter time.Duration) ([]string, error) {
	now, err := s.dbClock(ctx)
	if err != nil {
		return nil, fmt.Errorf("find dead serve processes: %w", err)
	}
	horizon := s.ts(now.Add(-deadAfter))
	rows, err := s.conn().query(ctx, `UPDATE serve_process SET claimed_by = ?, claimed_at = ?
		WHERE id <> ? AND beat_at < ? AND (claimed_at IS NULL OR claimed_at < ?) RETURNING id`,
		by, s.ts(now), by, horizon, horizon)
	if err != nil {
		return nil, fmt.Errorf("find dead serve processes: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find dead serve processes: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find dead serve processes: %w", err)
	}
	return ids, nil
}

// ForgetServeProcess removes the row of process id: it stopped cleanly
// (by is ""), or process by claimed it and has taken back its jobs (the
// row stays if its owner came back meanwhile and registered again).
func (s *Store) ForgetServeProcess(ctx context.Context, id, by string) error {
	q, args := `DELETE FROM serve_process WHERE id = ?`, []any{id}
	if by != "" {
		q, args = q+` AND claimed_by = ?`, append(args, by)
	}
	if _, err := s.conn().exec(ctx, q, args...); err != nil {
		return fmt.Errorf("forget serve process %s: %w", id, err)
	}
	return nil
}

// ServeProcesses lists the registered serve processes by id.
func (s *Store) ServeProcesses(ctx context.Context) ([]ServeProcess, error) {
	rows, err := s.conn().query(ctx, `SELECT id, host, pid, started_at, beat_at, claimed_by FROM serve_process ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list serve processes: %w", err)
	}
	defer rows.Close()
	var out []ServeProcess
	for rows.Next() {
		var p ServeProcess
		var claimed *string
		if err := rows.Scan(&p.ID, &p.Host, &p.PID, timeCol{&p.StartedAt}, timeCol{&p.BeatAt}, &claimed); err != nil {
			return nil, fmt.Errorf("list serve processes: %w", err)
		}
		if claimed != nil {
			p.ClaimedBy = *claimed
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list serve processes: %w", err)
	}
	return out, nil
}
