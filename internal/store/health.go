package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// HealthTarget is an enabled target with what health judges it by.
type HealthTarget struct {
	ID              int64
	TargetCode      string
	TargetName      string
	SiteCode        string
	CadenceDays     int // expected_cadence_days
	LastArticleTime *time.Time
	LastCrawledAt   *time.Time
	CreatedAt       time.Time
	ScheduleCron    string // schedule_cron, read in ZHIZHI_TIMEZONE; empty: crawled only when asked
	// LastRun is the newest run that finished (an interrupted run says
	// nothing about the target); nil when there is none.
	LastRun *TargetRun
}

// HealthTargets returns every enabled target (its site and site department
// enabled too), by target_code, with its newest finished run.
func (s *Store) HealthTargets(ctx context.Context) ([]HealthTarget, error) {
	rows, err := s.conn().query(ctx, `SELECT t.id, t.target_code, t.target_name, s.site_code, t.expected_cadence_days,
			t.last_article_time, t.last_crawled_at, t.created_at, t.schedule_cron,
			r.id, r.runner, r.started_at, r.finished_at, r.outcome, r.created, r.updated, r.unchanged,
			r.failed, r.pages, r.bytes, r.error_msg
		FROM crawl_target t
		JOIN crawl_site s ON s.id = t.site_id
		LEFT JOIN site_department d ON d.id = t.site_department_id
		LEFT JOIN (SELECT target_id, MAX(id) AS id FROM target_run WHERE outcome <> ? GROUP BY target_id) lr
			ON lr.target_id = t.id
		LEFT JOIN target_run r ON r.id = lr.id
		WHERE t.enabled = ? AND s.enabled = ? AND (d.id IS NULL OR d.enabled = ?)
		ORDER BY t.target_code`, RunInterrupted, true, true, true)
	if err != nil {
		return nil, fmt.Errorf("health targets: %w", err)
	}
	defer rows.Close()
	var out []HealthTarget
	for rows.Next() {
		var (
			h                                  HealthTarget
			runID                              sql.NullInt64
			run                                TargetRun
			created, updated, unchanged, fails sql.NullInt64
			pages, bytes                       sql.NullInt64
			outcome                            sql.NullString
			started, finished                  *time.Time
		)
		err := rows.Scan(&h.ID, &h.TargetCode, strCol{&h.TargetName}, &h.SiteCode, &h.CadenceDays,
			nullTimeCol{&h.LastArticleTime}, nullTimeCol{&h.LastCrawledAt}, timeCol{&h.CreatedAt}, strCol{&h.ScheduleCron},
			&runID, strCol{&run.Runner}, nullTimeCol{&started}, nullTimeCol{&finished}, &outcome,
			&created, &updated, &unchanged, &fails, &pages, &bytes, strCol{&run.Error})
		if err != nil {
			return nil, fmt.Errorf("health targets: %w", err)
		}
		if runID.Valid {
			run.ID, run.TargetID, run.Outcome = runID.Int64, h.ID, outcome.String
			if started != nil {
				run.StartedAt = *started
			}
			if finished != nil {
				run.FinishedAt = *finished
			}
			run.Created, run.Updated, run.Unchanged = int(created.Int64), int(updated.Int64), int(unchanged.Int64)
			run.Failed, run.Pages, run.Bytes = int(fails.Int64), int(pages.Int64), bytes.Int64
			h.LastRun = &run
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("health targets: %w", err)
	}
	return out, nil
}

// HostsNeedingAttention returns, by host, the hosts that at now are backing
// off, behind an open breaker, blocked (a CAPTCHA) or flagged for review.
func (s *Store) HostsNeedingAttention(ctx context.Context, now time.Time) ([]model.HostState, error) {
	at := s.ts(now)
	return s.hostStatesWhere(ctx, "hosts needing attention", `SELECT host FROM host_state
		WHERE backoff_until > ? OR breaker_until > ? OR needs_review = ? OR block_reason IS NOT NULL
		ORDER BY host`, at, at, true)
}

// FailingRobots returns, by host and origin, the robots.txt files whose
// last fetch failed (network error, 5xx, 429): their hosts are not asked
// anything else until a fetch succeeds.
func (s *Store) FailingRobots(ctx context.Context) ([]model.RobotsState, error) {
	rows, err := s.conn().query(ctx, `SELECT `+robotsStateColumns+` FROM robots_state WHERE failures > 0 ORDER BY host, origin`)
	if err != nil {
		return nil, fmt.Errorf("failing robots.txt: %w", err)
	}
	defer rows.Close()
	var out []model.RobotsState
	for rows.Next() {
		r, err := scanRobotsState(rows)
		if err != nil {
			return nil, fmt.Errorf("failing robots.txt: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failing robots.txt: %w", err)
	}
	return out, nil
}

// RequestCounts counts the requests crawl_log recorded in a window.
type RequestCounts struct {
	Total      int // requests that went out (refused locally ones excluded)
	Succeeded  int
	Challenged int // answered with a challenge or a CAPTCHA
}

// CountRequests counts the crawl_log rows with since <= occurred_at < until.
// Rows whose error_class is in local are requests zhizhi refused itself
// (robots.txt, breaker, backoff …) and are left out; rows whose class is in
// challenge count as challenged.
func (s *Store) CountRequests(ctx context.Context, since, until time.Time, local, challenge []string) (RequestCounts, error) {
	var c RequestCounts
	challenged := "0"
	args := []any{true}
	if len(challenge) > 0 {
		challenged = `CASE WHEN error_class IN (` + placeholders(len(challenge)) + `) THEN 1 ELSE 0 END`
		for _, v := range challenge {
			args = append(args, v)
		}
	}
	query := `SELECT COUNT(*), COALESCE(SUM(CASE WHEN success = ? THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(` + challenged + `), 0)
		FROM crawl_log WHERE occurred_at >= ? AND occurred_at < ?`
	args = append(args, s.ts(since), s.ts(until))
	if len(local) > 0 {
		query += ` AND (error_class IS NULL OR error_class NOT IN (` + placeholders(len(local)) + `))`
		for _, v := range local {
			args = append(args, v)
		}
	}
	if err := s.conn().queryRow(ctx, query, args...).Scan(&c.Total, &c.Succeeded, &c.Challenged); err != nil {
		return RequestCounts{}, fmt.Errorf("count requests: %w", err)
	}
	return c, nil
}
