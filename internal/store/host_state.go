package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// hostStateColumns is every column GetHostState reads, in scan order.
const hostStateColumns = `consecutive_errors, backoff_until, breaker_until, breaker_trips,
	needs_review, updated_at, block_reason, bucket_tokens, bucket_at`

// GetHostState returns the politeness state of host. A host never seen gives
// a zero HostState (with Host set) and ErrNotFound.
func (s *Store) GetHostState(ctx context.Context, host string) (model.HostState, error) {
	st := model.HostState{Host: host}
	var (
		trips  json.RawMessage
		tokens sql.NullFloat64
	)
	err := s.conn().queryRow(ctx, `SELECT `+hostStateColumns+` FROM host_state WHERE host = ?`, host).
		Scan(&st.ConsecutiveErrors, nullTimeCol{&st.BackoffUntil}, nullTimeCol{&st.BreakerUntil}, jsonCol{&trips},
			&st.NeedsReview, timeCol{&st.UpdatedAt}, strCol{&st.BlockReason}, &tokens, nullTimeCol{&st.BucketAt})
	if err != nil {
		return model.HostState{Host: host}, fmt.Errorf("host state %s: %w", host, notFound(err))
	}
	st.BucketTokens = tokens.Float64
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

func tripsJSON(trips []time.Time) (string, error) {
	out := make([]string, 0, len(trips))
	for _, t := range trips {
		out = append(out, t.UTC().Format(time.RFC3339Nano))
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// PutHostState inserts or replaces the whole state of st.Host; updated_at is
// set from the store clock. Code that changes only one part of a host's
// state while other processes may change the rest uses PutHostHealth or
// PutHostBucket, which leave the other columns alone.
func (s *Store) PutHostState(ctx context.Context, st *model.HostState) error {
	tj, err := tripsJSON(st.BreakerTrips)
	if err != nil {
		return fmt.Errorf("put host state: %w", err)
	}
	var tokens any
	if st.BucketAt != nil {
		tokens = st.BucketTokens
	}
	st.UpdatedAt = s.now()
	_, err = s.conn().exec(ctx, `INSERT INTO host_state (host, consecutive_errors, backoff_until, breaker_until,
		breaker_trips, needs_review, updated_at, block_reason, bucket_tokens, bucket_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET consecutive_errors = excluded.consecutive_errors,
			backoff_until = excluded.backoff_until, breaker_until = excluded.breaker_until,
			breaker_trips = excluded.breaker_trips, needs_review = excluded.needs_review,
			updated_at = excluded.updated_at, block_reason = excluded.block_reason,
			bucket_tokens = excluded.bucket_tokens, bucket_at = excluded.bucket_at`,
		st.Host, st.ConsecutiveErrors, s.tsPtr(st.BackoffUntil), s.tsPtr(st.BreakerUntil), tj,
		st.NeedsReview, s.ts(st.UpdatedAt), nullStr(st.BlockReason), tokens, s.tsPtr(st.BucketAt))
	if err != nil {
		return fmt.Errorf("put host state %s: %w", st.Host, err)
	}
	return nil
}

// PutHostHealth stores the backoff, breaker and block fields of st (a row
// is created when missing), leaving the bucket alone. The
// review flag and a block reason are only ever added here, never cleared:
// a process that read the row before another recorded a CAPTCHA must not
// undo it. Only a person clears them (ClearHostBlock).
func (s *Store) PutHostHealth(ctx context.Context, st *model.HostState) error {
	tj, err := tripsJSON(st.BreakerTrips)
	if err != nil {
		return fmt.Errorf("put host health: %w", err)
	}
	st.UpdatedAt = s.now()
	_, err = s.conn().exec(ctx, `INSERT INTO host_state (host, consecutive_errors, backoff_until, breaker_until,
		breaker_trips, needs_review, block_reason, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET consecutive_errors = excluded.consecutive_errors,
			backoff_until = excluded.backoff_until, breaker_until = excluded.breaker_until,
			breaker_trips = excluded.breaker_trips,
			needs_review = (excluded.needs_review OR host_state.needs_review),
			block_reason = COALESCE(excluded.block_reason, host_state.block_reason),
			updated_at = excluded.updated_at`,
		st.Host, st.ConsecutiveErrors, s.tsPtr(st.BackoffUntil), s.tsPtr(st.BreakerUntil), tj,
		st.NeedsReview, nullStr(st.BlockReason), s.ts(st.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put host health %s: %w", st.Host, err)
	}
	return nil
}

// GetHostBucket returns the token bucket host's last request left: tokens
// at at. ok is false when no process has taken a token there yet.
func (s *Store) GetHostBucket(ctx context.Context, host string) (tokens float64, at time.Time, ok bool, err error) {
	var (
		tk  sql.NullFloat64
		atp *time.Time
	)
	err = s.conn().queryRow(ctx, `SELECT bucket_tokens, bucket_at FROM host_state WHERE host = ?`, host).
		Scan(&tk, nullTimeCol{&atp})
	if err == sql.ErrNoRows {
		return 0, time.Time{}, false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("host bucket %s: %w", host, err)
	}
	if !tk.Valid || atp == nil {
		return 0, time.Time{}, false, nil
	}
	return tk.Float64, *atp, true, nil
}

// PutHostBucket records host's bucket after a token was taken: tokens left
// at at (stored to the microsecond). Only the bucket columns change.
func (s *Store) PutHostBucket(ctx context.Context, host string, tokens float64, at time.Time) error {
	_, err := s.conn().exec(ctx, `INSERT INTO host_state (host, bucket_tokens, bucket_at, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET bucket_tokens = excluded.bucket_tokens,
			bucket_at = excluded.bucket_at, updated_at = excluded.updated_at`,
		host, tokens, s.ts(at), s.ts(s.now()))
	if err != nil {
		return fmt.Errorf("put host bucket %s: %w", host, err)
	}
	return nil
}

// ClearHostBlock is a person's decision that host may be asked again: the
// error run, backoff, breaker, review flag and block reason (a CAPTCHA) are
// cleared, and so is a robots.txt that could not be fetched, on any of the
// host's origins, so the next request asks for it at once. Past breaker
// trips stay, so the review rule still counts them. ErrNotFound when the
// host has no recorded state at all.
func (s *Store) ClearHostBlock(ctx context.Context, host string) error {
	return s.WithTx(ctx, func(tx *Tx) error { return tx.ClearHostBlock(ctx, host) })
}

// ClearHostBlock is Store.ClearHostBlock inside tx, so the console can
// record who cleared the host in the same transaction.
func (t *Tx) ClearHostBlock(ctx context.Context, host string) error {
	s := t.s
	res, err := t.c.exec(ctx, `UPDATE host_state SET consecutive_errors = 0, backoff_until = NULL,
		breaker_until = NULL, needs_review = ?, block_reason = NULL, updated_at = ? WHERE host = ?`,
		false, s.ts(s.now()), host)
	if err != nil {
		return fmt.Errorf("clear host block %s: %w", host, err)
	}
	n, _ := res.RowsAffected()
	// A failed fetch is forgotten entirely (not kept as a stale copy):
	// there is no file to fall back on, only a failure to retry.
	res, err = t.c.exec(ctx, `DELETE FROM robots_state WHERE host = ? AND failures > 0`, host)
	if err != nil {
		return fmt.Errorf("clear host block %s: robots.txt: %w", host, err)
	}
	m, _ := res.RowsAffected()
	if n == 0 && m == 0 {
		return fmt.Errorf("clear host block %s: %w", host, ErrNotFound)
	}
	return nil
}

// ListHostStates returns the politeness state of every host seen, by host.
func (s *Store) ListHostStates(ctx context.Context) ([]model.HostState, error) {
	return s.hostStatesWhere(ctx, "list host states", `SELECT host FROM host_state ORDER BY host`)
}

// hostStatesWhere reads the state of each host the query names (its one
// column), in its order; what names the query in errors.
func (s *Store) hostStatesWhere(ctx context.Context, what, query string, args ...any) ([]model.HostState, error) {
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		hosts = append(hosts, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]model.HostState, 0, len(hosts))
	for _, h := range hosts {
		st, err := s.GetHostState(ctx, h)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
