package store

import (
	"context"
	"fmt"
	"time"
)

// TargetSchedule is what the scheduler needs to know of one target.
type TargetSchedule struct {
	ID            int64
	SiteID        int64
	Code          string
	Cron          string
	Enabled       bool
	LastCrawledAt *time.Time
	// SlotAt is the schedule slot the target's crawl was last queued for.
	SlotAt *time.Time
}

// ListSchedules returns every target's schedule, enabled or not, by id.
// Enabled means the target, its site and its site department are all enabled.
func (s *Store) ListSchedules(ctx context.Context) ([]TargetSchedule, error) {
	rows, err := s.conn().query(ctx, `SELECT t.id, t.site_id, t.target_code, t.schedule_cron,
			CASE WHEN t.enabled = ? AND s.enabled = ? AND (d.id IS NULL OR d.enabled = ?) THEN 1 ELSE 0 END,
			t.last_crawled_at, t.schedule_slot_at
		FROM crawl_target t JOIN crawl_site s ON s.id = t.site_id
		LEFT JOIN site_department d ON d.id = t.site_department_id
		ORDER BY t.id`, true, true, true)
	if err != nil {
		return nil, fmt.Errorf("target schedules: %w", err)
	}
	defer rows.Close()
	var out []TargetSchedule
	for rows.Next() {
		var ts TargetSchedule
		if err := rows.Scan(&ts.ID, &ts.SiteID, &ts.Code, strCol{&ts.Cron}, &ts.Enabled,
			nullTimeCol{&ts.LastCrawledAt}, nullTimeCol{&ts.SlotAt}); err != nil {
			return nil, fmt.Errorf("target schedules: %w", err)
		}
		out = append(out, ts)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("target schedules: %w", err)
	}
	return out, nil
}

// SetScheduleSlot records that the target's crawl was queued for slot. A
// slot never moves back, so two schedulers racing cannot undo each other.
func (s *Store) SetScheduleSlot(ctx context.Context, targetID int64, slot time.Time) error {
	_, err := s.conn().exec(ctx, `UPDATE crawl_target SET schedule_slot_at = ?
		WHERE id = ? AND (schedule_slot_at IS NULL OR schedule_slot_at < ?)`, s.ts(slot), targetID, s.ts(slot))
	if err != nil {
		return fmt.Errorf("record schedule slot of target %d: %w", targetID, err)
	}
	return nil
}

// TargetsWithDueRechecks returns the enabled targets that have at least one
// stored article whose next check is due at now, by id.
func (s *Store) TargetsWithDueRechecks(ctx context.Context, now time.Time) ([]int64, error) {
	rows, err := s.conn().query(ctx, `SELECT DISTINCT f.target_id FROM frontier f
		JOIN crawl_target t ON t.id = f.target_id
		JOIN article a ON a.id = f.article_id
		LEFT JOIN url_state u ON u.url_hash = f.url_hash
		WHERE t.enabled = ? AND f.state = 'fetched' AND a.status = 'ready'
			AND (u.next_check_at IS NULL OR u.next_check_at <= ?)
		ORDER BY f.target_id`, true, s.ts(now))
	if err != nil {
		return nil, fmt.Errorf("targets with due re-checks: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("targets with due re-checks: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// TargetsWithDueRetries returns the enabled targets that have at least one
// link whose last attempt failed and whose retry time has come at now, by
// id.
func (s *Store) TargetsWithDueRetries(ctx context.Context, now time.Time) ([]int64, error) {
	rows, err := s.conn().query(ctx, `SELECT DISTINCT f.target_id FROM frontier f
		JOIN crawl_target t ON t.id = f.target_id
		WHERE t.enabled = ? AND f.state = 'failed' AND (f.next_attempt_at IS NULL OR f.next_attempt_at <= ?)
		ORDER BY f.target_id`, true, s.ts(now))
	if err != nil {
		return nil, fmt.Errorf("targets with due retries: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("targets with due retries: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
