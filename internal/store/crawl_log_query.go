package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"zhizhi/internal/model"
)

// CrawlLogQuery selects crawl log rows for people and the API. Empty fields
// do not filter.
type CrawlLogQuery struct {
	SiteID   *int64
	TargetID *int64
	Host     string
	Purpose  string
	Success  *bool
	From     *time.Time // occurred_at on or after
	To       *time.Time // occurred_at before
	// BeforeID continues a page: rows with a smaller id, newest first.
	BeforeID int64
	Limit    int // default 50, at most 500
}

// QueryCrawlLogs returns one page of crawl log rows, newest first by id.
func (s *Store) QueryCrawlLogs(ctx context.Context, q CrawlLogQuery) ([]model.CrawlLog, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v ...any) { where, args = append(where, cond), append(args, v...) }
	if q.SiteID != nil {
		add("site_id = ?", *q.SiteID)
	}
	if q.TargetID != nil {
		add("target_id = ?", *q.TargetID)
	}
	if q.Host != "" {
		add("host = ?", q.Host)
	}
	if q.Purpose != "" {
		add("purpose = ?", q.Purpose)
	}
	if q.Success != nil {
		add("success = ?", *q.Success)
	}
	if q.From != nil {
		add("occurred_at >= ?", s.ts(*q.From))
	}
	if q.To != nil {
		add("occurred_at < ?", s.ts(*q.To))
	}
	if q.BeforeID > 0 {
		add("id < ?", q.BeforeID)
	}
	query := `SELECT id, site_id, target_id, host, article_url, purpose, method, strategy, http_status, bytes,
		bytes_saved, duration_ms, success, error_class, error_msg, occurred_at FROM crawl_log`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, pageLimit(q.Limit))
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query crawl logs: %w", err)
	}
	defer rows.Close()
	out := []model.CrawlLog{}
	for rows.Next() {
		var l model.CrawlLog
		err := rows.Scan(&l.ID, &l.SiteID, &l.TargetID, &l.Host, strCol{&l.ArticleURL}, &l.Purpose, &l.Method,
			strCol{&l.Strategy}, &l.HTTPStatus, &l.Bytes, &l.BytesSaved, &l.DurationMS, &l.Success,
			strCol{&l.ErrorClass}, strCol{&l.ErrorMsg}, timeCol{&l.OccurredAt})
		if err != nil {
			return nil, fmt.Errorf("query crawl logs: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query crawl logs: %w", err)
	}
	return out, nil
}
