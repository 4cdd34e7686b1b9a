package store

import (
	"context"
	"fmt"

	"zhizhi/internal/model"
)

const robotsStateColumns = `origin, host, status, body, fetched_at, etag, last_modified,
	failures, failing_since, last_error, updated_at`

func scanRobotsState(sc interface{ Scan(...any) error }) (model.RobotsState, error) {
	var r model.RobotsState
	err := sc.Scan(&r.Origin, &r.Host, &r.Status, &r.Body, timeCol{&r.FetchedAt}, strCol{&r.ETag},
		strCol{&r.LastModified}, &r.Failures, nullTimeCol{&r.FailingSince}, strCol{&r.LastError}, timeCol{&r.UpdatedAt})
	return r, err
}

// GetRobotsState returns the robots.txt kept for origin ("https://h:443"),
// or ErrNotFound.
func (s *Store) GetRobotsState(ctx context.Context, origin string) (model.RobotsState, error) {
	r, err := scanRobotsState(s.conn().queryRow(ctx, `SELECT `+robotsStateColumns+` FROM robots_state WHERE origin = ?`, origin))
	if err != nil {
		return model.RobotsState{}, fmt.Errorf("robots state %s: %w", origin, notFound(err))
	}
	return r, nil
}

// PutRobotsState inserts or replaces the robots.txt of r.Origin; updated_at
// is set from the store clock.
func (s *Store) PutRobotsState(ctx context.Context, r *model.RobotsState) error {
	r.UpdatedAt = s.now()
	_, err := s.conn().exec(ctx, `INSERT INTO robots_state (`+robotsStateColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET host = excluded.host, status = excluded.status,
			body = excluded.body, fetched_at = excluded.fetched_at, etag = excluded.etag,
			last_modified = excluded.last_modified, failures = excluded.failures,
			failing_since = excluded.failing_since, last_error = excluded.last_error,
			updated_at = excluded.updated_at`,
		r.Origin, r.Host, r.Status, r.Body, s.ts(r.FetchedAt), nullStr(r.ETag), nullStr(r.LastModified),
		r.Failures, s.tsPtr(r.FailingSince), nullStr(r.LastError), s.ts(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put robots state %s: %w", r.Origin, err)
	}
	return nil
}

// ListRobotsStates returns every origin's robots.txt, by host and origin.
func (s *Store) ListRobotsStates(ctx context.Context) ([]model.RobotsState, error) {
	rows, err := s.conn().query(ctx, `SELECT `+robotsStateColumns+` FROM robots_state ORDER BY host, origin`)
	if err != nil {
		return nil, fmt.Errorf("list robots states: %w", err)
	}
	defer rows.Close()
	var out []model.RobotsState
	for rows.Next() {
		r, err := scanRobotsState(rows)
		if err != nil {
			return nil, fmt.Errorf("list robots states: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list robots states: %w", err)
	}
	return out, nil
}
