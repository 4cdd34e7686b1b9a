package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// InsertCrawlLog records one request. It runs outside any transaction, so
// each row is durable as soon as it returns, whatever happens to the crawl.
// A zero OccurredAt means now; an empty Method means GET.
func (s *Store) InsertCrawlLog(ctx context.Context, l *model.CrawlLog) error {
	if l.OccurredAt.IsZero() {
		l.OccurredAt = s.now()
	}
	if l.Method == "" {
		l.Method = "GET"
	}
	id, err := s.conn().insertID(ctx, `INSERT INTO crawl_log (site_id, target_id, host, article_url, purpose,
		method, strategy, http_status, bytes, bytes_saved, duration_ms, success, error_class, error_msg, occurred_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.SiteID, l.TargetID, l.Host, nullStr(l.ArticleURL), l.Purpose, l.Method, nullStr(l.Strategy),
		l.HTTPStatus, l.Bytes, l.BytesSaved, l.DurationMS, l.Success, nullStr(l.ErrorClass), nullStr(l.ErrorMsg),
		s.ts(l.OccurredAt))
	if err != nil {
		return fmt.Errorf("insert crawl log: %w", err)
	}
	l.ID = id
	return nil
}

// CrawlLogFilter selects crawl_log rows; zero fields select all.
type CrawlLogFilter struct {
	ID       int64 // one row
	Host     string
	TargetID *int64
	SiteID   *int64
	Purpose  string // model.Purpose*
	Success  *bool
	// Keyset paging: only rows older than (BeforeAt, BeforeID) in the
	// newest-first order, i.e. the page after the row with that id and time.
	BeforeAt *time.Time
	BeforeID int64
	Limit    int // default 100
}

// ListCrawlLogs returns the newest rows matching f first.
func (s *Store) ListCrawlLogs(ctx context.Context, f CrawlLogFilter) ([]model.CrawlLog, error) {
	query := `SELECT id, site_id, target_id, host, article_url, purpose, method, strategy, http_status, bytes,
		bytes_saved, duration_ms, success, error_class, error_msg, occurred_at FROM crawl_log WHERE 1 = 1`
	var args []any
	if f.ID != 0 {
		query += ` AND id = ?`
		args = append(args, f.ID)
	}
	if f.Host != "" {
		query += ` AND host = ?`
		args = append(args, f.Host)
	}
	if f.TargetID != nil {
		query += ` AND target_id = ?`
		args = append(args, *f.TargetID)
	}
	if f.SiteID != nil {
		query += ` AND site_id = ?`
		args = append(args, *f.SiteID)
	}
	if f.Purpose != "" {
		query += ` AND purpose = ?`
		args = append(args, f.Purpose)
	}
	if f.Success != nil {
		query += ` AND success = ?`
		args = append(args, *f.Success)
	}
	if f.BeforeAt != nil {
		at := s.ts(*f.BeforeAt)
		query += ` AND (occurred_at < ? OR (occurred_at = ? AND id < ?))`
		args = append(args, at, at, f.BeforeID)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	query += ` ORDER BY occurred_at DESC, id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list crawl logs: %w", err)
	}
	defer rows.Close()
	var out []model.CrawlLog
	for rows.Next() {
		var l model.CrawlLog
		err := rows.Scan(&l.ID, &l.SiteID, &l.TargetID, &l.Host, strCol{&l.ArticleURL}, &l.Purpose, &l.Method,
			strCol{&l.Strategy}, &l.HTTPStatus, &l.Bytes, &l.BytesSaved, &l.DurationMS, &l.Success, strCol{&l.ErrorClass},
			strCol{&l.ErrorMsg}, timeCol{&l.OccurredAt})
		if err != nil {
			return nil, fmt.Errorf("list crawl logs: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list crawl logs: %w", err)
	}
	return out, nil
}
