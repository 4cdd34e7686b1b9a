package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// GetHostState returns the politeness state of host. A host never seen gives
// a zero HostState (with Host set) and ErrNotFound.
func (s *Store) GetHostState(ctx context.Context, host string) (model.HostState, error) {
	st := model.HostState{Host: host}
	var trips json.RawMessage
	err := s.conn().queryRow(ctx, `SELECT consecutive_errors, backoff_until, breaker_until, breaker_trips,
		needs_review, robots_body, robots_status, robots_fetched_at, updated_at FROM host_state WHERE host = ?`, host).
		Scan(&st.ConsecutiveErrors, nullTimeCol{&st.BackoffUntil}, nullTimeCol{&st.BreakerUntil}, jsonCol{&trips},
			&st.NeedsReview, &st.RobotsBody, &st.RobotsStatus, nullTimeCol{&st.RobotsFetchedAt}, timeCol{&st.UpdatedAt})
	if err != nil {
		return model.HostState{Host: host}, fmt.Errorf("host state %s: %w", host, notFound(err))
	}
	if len(trips) > 0 {
		var raw []string
		if err := json.Unmarshal(trips, &raw); err != nil {
			return st, fmt.Errorf("host state %s: breaker_trips: %w", host, err)
		}
		for _, r := range raw {
			t, err := time.Parse(time.RFC3339Nano, r)
			if err != nil {
				return st, fmt.Errorf("host state %s: breaker_trips: %w", host, err)
			}
			st.BreakerTrips = append(st.BreakerTrips, t.UTC())
		}
	}
	return st, nil
}

// PutHostState inserts or replaces the state of st.Host; updated_at is set
// from the store clock.
func (s *Store) PutHostState(ctx context.Context, st *model.HostState) error {
	trips := make([]string, 0, len(st.BreakerTrips))
	for _, t := range st.BreakerTrips {
		trips = append(trips, t.UTC().Format(time.RFC3339Nano))
	}
	tj, err := json.Marshal(trips)
	if err != nil {
		return fmt.Errorf("put host state: %w", err)
	}
	st.UpdatedAt = s.now()
	_, err = s.conn().exec(ctx, `INSERT INTO host_state (host, consecutive_errors, backoff_until, breaker_until,
		breaker_trips, needs_review, robots_body, robots_status, robots_fetched_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET consecutive_errors = excluded.consecutive_errors,
			backoff_until = excluded.backoff_until, breaker_until = excluded.breaker_until,
			breaker_trips = excluded.breaker_trips, needs_review = excluded.needs_review,
			robots_body = excluded.robots_body, robots_status = excluded.robots_status,
			robots_fetched_at = excluded.robots_fetched_at, updated_at = excluded.updated_at`,
		st.Host, st.ConsecutiveErrors, s.tsPtr(st.BackoffUntil), s.tsPtr(st.BreakerUntil), string(tj),
		st.NeedsReview, st.RobotsBody, st.RobotsStatus, s.tsPtr(st.RobotsFetchedAt), s.ts(st.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put host state %s: %w", st.Host, err)
	}
	return nil
}
