package store

import (
	"context"
	"fmt"
	"time"
)

// HostHistoryQuery asks crawl_log what a host has needed lately: rows of
// Host since Since whose error class is ChallengeClass (a direct answer
// that was a cookie challenge), and successful rows on BrowserStrategy
// whose purpose is among Purposes (pages the browser drew for the crawler).
type HostHistoryQuery struct {
	Host            string
	Since           time.Time
	ChallengeClass  string
	BrowserStrategy string
	Purposes        []string
}

// HostHistory is HostHistoryQuery's answer.
type HostHistory struct {
	LastChallenge *time.Time // nil: none since Since
	BrowserPages  int
}

// HostHistory reads what q asks from crawl_log (by its host and time index).
func (s *Store) HostHistory(ctx context.Context, q HostHistoryQuery) (HostHistory, error) {
	var h HostHistory
	err := s.conn().queryRow(ctx, `SELECT MAX(occurred_at) FROM crawl_log
		WHERE host = ? AND occurred_at >= ? AND error_class = ?`, q.Host, s.ts(q.Since), q.ChallengeClass).
		Scan(nullTimeCol{&h.LastChallenge})
	if err != nil {
		return h, fmt.Errorf("host history %s: %w", q.Host, err)
	}
	if len(q.Purposes) == 0 {
		return h, nil
	}
	query := `SELECT COUNT(*) FROM crawl_log WHERE host = ? AND occurred_at >= ? AND strategy = ? AND success = ? AND purpose IN (?`
	args := []any{q.Host, s.ts(q.Since), q.BrowserStrategy, true, q.Purposes[0]}
	for _, p := range q.Purposes[1:] {
		query += `, ?`
		args = append(args, p)
	}
	if err := s.conn().queryRow(ctx, query+`)`, args...).Scan(&h.BrowserPages); err != nil {
		return h, fmt.Errorf("host history %s: %w", q.Host, err)
	}
	return h, nil
}
