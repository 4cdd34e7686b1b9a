package store

import (
	"context"
	"fmt"
	"time"
)

// Kinds of login_failure subject.
const (
	LoginByUser = "user" // the username tried
	LoginByIP   = "ip"   // the client address
)

// AddLoginAttempt records an attempt on subject at at, before its password
// is checked, and returns its id. Recording first and counting after makes
// the limit hold against attempts racing in parallel, in one process or in
// several: of any number of simultaneous attempts, each counts every one
// recorded before it, so no more than the limit get through. The caller
// removes the row again (DeleteLoginAttempt) when the attempt turns out not
// to be a failure.
func (s *Store) AddLoginAttempt(ctx context.Context, kind, subject string, at time.Time) (int64, error) {
	id, err := s.conn().insertID(ctx, `INSERT INTO login_failure (kind, subject, at) VALUES (?, ?, ?)`, kind, subject, s.ts(at))
	if err != nil {
		return 0, fmt.Errorf("record login attempt: %w", err)
	}
	return id, nil
}

// LoginAttemptsSince returns the times of the attempts on subject after
// since, oldest first, leaving out the attempt numbered except.
func (s *Store) LoginAttemptsSince(ctx context.Context, kind, subject string, since time.Time, except int64) ([]time.Time, error) {
	rows, err := s.conn().query(ctx, `SELECT at FROM login_failure WHERE kind = ? AND subject = ? AND at > ? AND id <> ?
		ORDER BY at, id`, kind, subject, s.ts(since), except)
	if err != nil {
		return nil, fmt.Errorf("count login failures: %w", err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var t time.Time
		if err := rows.Scan(timeCol{&t}); err != nil {
			return nil, fmt.Errorf("count login failures: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count login failures: %w", err)
	}
	return out, nil
}

// DeleteLoginAttempt removes one attempt: it was refused before its
// password was looked at, or it succeeded.
func (s *Store) DeleteLoginAttempt(ctx context.Context, id int64) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM login_failure WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete login attempt: %w", err)
	}
	return nil
}

// ClearLoginFailures forgets every failure on subject (a successful login
// clears its username's count).
func (s *Store) ClearLoginFailures(ctx context.Context, kind, subject string) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM login_failure WHERE kind = ? AND subject = ?`, kind, subject); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	return nil
}

// PruneLoginFailures removes failures at or before before, which no longer
// count against anyone.
func (s *Store) PruneLoginFailures(ctx context.Context, before time.Time) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM login_failure WHERE at <= ?`, s.ts(before)); err != nil {
		return fmt.Errorf("prune login failures: %w", err)
	}
	return nil
}
