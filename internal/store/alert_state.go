package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// AlertMessage is what is said about one change of a condition.
type AlertMessage struct {
	Title string
	Lines []string
}

// AlertChange names one change of a condition: its episode starting
// (Firing) or ending.
type AlertChange struct {
	Key     string
	Episode int64
	Firing  bool
}

// AlertNotice is a change of a condition that was claimed and whose
// message has not been handed to the job queue yet.
type AlertNotice struct {
	AlertChange
	Rule    string
	Subject string
	At      time.Time // when the change was claimed
	AlertMessage
}

// Values of alert_outbox.state.
const (
	alertFiring   = "firing"
	alertResolved = "resolved"
)

// ClaimAlertFiring records that condition key holds at now. It returns
// claimed = true, and the episode number, only when this call changed the
// condition from not firing (or never seen) to firing: the caller is then
// the one process that sends the alert. A condition already firing is left
// as it is and claimed is false. The claim is one conditional write, so of
// several processes evaluating at once exactly one wins; msg is kept with
// it, in the same transaction, until AlertsQueued says it was queued.
func (s *Store) ClaimAlertFiring(ctx context.Context, key, rule, subject string, msg AlertMessage, now time.Time) (episode int64, claimed bool, err error) {
	at := s.ts(now)
	err = s.WithTx(ctx, func(tx *Tx) error {
		err := tx.c.queryRow(ctx, `INSERT INTO alert_state (key, rule, subject, firing, episode, fired_at, resolved_at, detail, updated_at)
			VALUES (?, ?, ?, ?, 1, ?, NULL, ?, ?)
			ON CONFLICT (key) DO UPDATE SET firing = excluded.firing, episode = alert_state.episode + 1,
				fired_at = excluded.fired_at, resolved_at = NULL, detail = excluded.detail, updated_at = excluded.updated_at
			WHERE alert_state.firing = ?
			RETURNING episode`, key, rule, subject, true, at, nullStr(strings.Join(msg.Lines, "\n")), at, false).Scan(&episode)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		claimed = true
		return tx.c.keepAlertMessage(ctx, AlertChange{Key: key, Episode: episode, Firing: true}, at, msg)
	})
	if err != nil {
		return 0, false, fmt.Errorf("claim alert %s: %w", key, err)
	}
	return episode, claimed, nil
}

// ClaimAlertResolved records that condition key no longer holds at now.
// Only the call that changes it from firing to not firing gets claimed =
// true, with the state it had while firing; it sends the recovery, whose
// message msg makes from that state (inside the transaction: msg must not
// use the database).
func (s *Store) ClaimAlertResolved(ctx context.Context, key string, now time.Time, msg func(prev AlertState) AlertMessage) (AlertState, bool, error) {
	at := s.ts(now)
	var (
		st      AlertState
		claimed bool
	)
	err := s.WithTx(ctx, func(tx *Tx) error {
		var err error
		st, err = scanAlertState(tx.c.queryRow(ctx, `UPDATE alert_state SET firing = ?, resolved_at = ?, updated_at = ?
			WHERE key = ? AND firing = ?
			RETURNING `+alertStateColumns, false, at, at, key, true))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		claimed = true
		return tx.c.keepAlertMessage(ctx, AlertChange{Key: key, Episode: st.Episode}, at, msg(st))
	})
	if err != nil {
		return AlertState{}, false, fmt.Errorf("resolve alert %s: %w", key, err)
	}
	if !claimed {
		return AlertState{}, false, nil
	}
	return st, true, nil
}

func (c conn) keepAlertMessage(ctx context.Context, ch AlertChange, at any, msg AlertMessage) error {
	lines, err := json.Marshal(append([]string{}, msg.Lines...))
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, `INSERT INTO alert_outbox (key, episode, state, changed_at, title, lines) VALUES (?, ?, ?, ?, ?, ?)`,
		ch.Key, ch.Episode, ch.state(), at, msg.Title, string(lines))
	return err
}

func (ch AlertChange) state() string {
	if ch.Firing {
		return alertFiring
	}
	return alertResolved
}

// UnqueuedAlerts returns the changes claimed and not yet queued, oldest
// first: those of a claim under way, and those whose process died before
// it queued them.
func (s *Store) UnqueuedAlerts(ctx context.Context) ([]AlertNotice, error) {
	rows, err := s.conn().query(ctx, `SELECT o.key, o.episode, o.state, s.rule, s.subject, o.changed_at, o.title, o.lines
		FROM alert_outbox o JOIN alert_state s ON s.key = o.key
		ORDER BY o.changed_at, o.key, o.episode, o.state`)
	if err != nil {
		return nil, fmt.Errorf("unqueued alerts: %w", err)
	}
	defer rows.Close()
	var out []AlertNotice
	for rows.Next() {
		var (
			n     AlertNotice
			state string
			lines json.RawMessage
		)
		if err := rows.Scan(&n.Key, &n.Episode, &state, &n.Rule, &n.Subject, timeCol{&n.At}, &n.Title, jsonCol{&lines}); err != nil {
			return nil, fmt.Errorf("unqueued alerts: %w", err)
		}
		n.Firing = state == alertFiring
		if err := json.Unmarshal(lines, &n.Lines); err != nil {
			return nil, fmt.Errorf("unqueued alerts: %s: %w", n.Key, err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unqueued alerts: %w", err)
	}
	return out, nil
}

// AlertsQueued forgets the messages of changes whose deliveries are queued.
func (s *Store) AlertsQueued(ctx context.Context, changes []AlertChange) error {
	if len(changes) == 0 {
		return nil
	}
	err := s.WithTx(ctx, func(tx *Tx) error {
		for _, ch := range changes {
			if _, err := tx.c.exec(ctx, `DELETE FROM alert_outbox WHERE key = ? AND episode = ? AND state = ?`,
				ch.Key, ch.Episode, ch.state()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("alerts queued: %w", err)
	}
	return nil
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
