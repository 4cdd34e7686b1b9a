package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AlertState is the state of one alert condition.
type AlertState struct {
	Key        string // the rule, and ":subject" for a per-target or per-host rule
	Rule       string
	Subject    string
	Firing     bool
	Episode    int64 // how many times the condition has fired
	FiredAt    time.Time
	ResolvedAt *time.Time
	Detail     string // what was seen when it last fired
	UpdatedAt  time.Time
}

// ClaimAlertFiring records that condition key holds at now. It returns
// claimed = true, and the episode number, only when this call changed the
// condition from not firing (or never seen) to firing: the caller is then
// the one process that sends the alert. A condition already firing is left
// as it is and claimed is false. The claim is one conditional write, so of
// several processes evaluating at once exactly one wins.
func (s *Store) ClaimAlertFiring(ctx context.Context, key, rule, subject, detail string, now time.Time) (episode int64, claimed bool, err error) {
	at := s.ts(now)
	err = s.conn().queryRow(ctx, `INSERT INTO alert_state (key, rule, subject, firing, episode, fired_at, resolved_at, detail, updated_at)
		VALUES (?, ?, ?, ?, 1, ?, NULL, ?, ?)
		ON CONFLICT (key) DO UPDATE SET firing = excluded.firing, episode = alert_state.episode + 1,
			fired_at = excluded.fired_at, resolved_at = NULL, detail = excluded.detail, updated_at = excluded.updated_at
		WHERE alert_state.firing = ?
		RETURNING episode`, key, rule, subject, true, at, nullStr(detail), at, false).Scan(&episode)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("claim alert %s: %w", key, err)
	}
	return episode, true, nil
}

// ClaimAlertResolved records that condition key no longer holds at now.
// Only the call that changes it from firing to not firing gets claimed =
// true, with the state it had while firing; it sends the recovery.
func (s *Store) ClaimAlertResolved(ctx context.Context, key string, now time.Time) (AlertState, bool, error) {
	at := s.ts(now)
	st, err := scanAlertState(s.conn().queryRow(ctx, `UPDATE alert_state SET firing = ?, resolved_at = ?, updated_at = ?
		WHERE key = ? AND firing = ?
		RETURNING `+alertStateColumns, false, at, at, key, true))
	if errors.Is(err, sql.ErrNoRows) {
		return AlertState{}, false, nil
	}
	if err != nil {
		return AlertState{}, false, fmt.Errorf("resolve alert %s: %w", key, err)
	}
	return st, true, nil
}

const alertStateColumns = `key, rule, subject, firing, episode, fired_at, resolved_at, detail, updated_at`

func scanAlertState(sc interface{ Scan(...any) error }) (AlertState, error) {
	var a AlertState
	err := sc.Scan(&a.Key, &a.Rule, &a.Subject, &a.Firing, &a.Episode, timeCol{&a.FiredAt}, nullTimeCol{&a.ResolvedAt},
		strCol{&a.Detail}, timeCol{&a.UpdatedAt})
	return a, err
}

// FiringAlerts returns the conditions of rule that are firing, by key.
func (s *Store) FiringAlerts(ctx context.Context, rule string) ([]AlertState, error) {
	rows, err := s.conn().query(ctx, `SELECT `+alertStateColumns+` FROM alert_state WHERE rule = ? AND firing = ? ORDER BY key`, rule, true)
	if err != nil {
		return nil, fmt.Errorf("firing alerts: %w", err)
	}
	defer rows.Close()
	var out []AlertState
	for rows.Next() {
		a, err := scanAlertState(rows)
		if err != nil {
			return nil, fmt.Errorf("firing alerts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("firing alerts: %w", err)
	}
	return out, nil
}
