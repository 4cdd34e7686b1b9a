package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// StatusCounts counts a site's articles by status.
type StatusCounts struct {
	Ready, Failed, Raw int
}

// ArticleCounts returns, per site_code, how many articles are in each status.
func (s *Store) ArticleCounts(ctx context.Context) (map[string]StatusCounts, error) {
	rows, err := s.conn().query(ctx, `SELECT s.site_code, a.status, COUNT(*) FROM article a
		JOIN crawl_site s ON s.id = a.site_id GROUP BY s.site_code, a.status`)
	if err != nil {
		return nil, fmt.Errorf("article counts: %w", err)
	}
	defer rows.Close()
	out := map[string]StatusCounts{}
	for rows.Next() {
		var code, status string
		var n int
		if err := rows.Scan(&code, &status, &n); err != nil {
			return nil, fmt.Errorf("article counts: %w", err)
		}
		c := out[code]
		switch status {
		case model.StatusReady:
			c.Ready = n
		case model.StatusFailed:
			c.Failed = n
		default:
			c.Raw = n
		}
		out[code] = c
	}
	return out, rows.Err()
}

// DueArticle is a stored article whose source is due for a re-check.
type DueArticle struct {
	ID           int64
	URL          string
	NativePostID string
}

// DueArticles returns up to limit articles of a target whose url_state says
// they are due for a conditional re-check at now (next_check_at reached, or
// never checked), oldest check first. This is how edits to old articles are
// found without paging whole lists again (seed 000 §4.7).
func (s *Store) DueArticles(ctx context.Context, targetID int64, now time.Time, limit int) ([]DueArticle, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.conn().query(ctx, `SELECT a.id, a.url, a.native_post_id FROM article a
		LEFT JOIN url_state u ON u.url_hash = a.url_hash
		WHERE a.target_id = ? AND (u.next_check_at IS NULL OR u.next_check_at <= ?)
		ORDER BY u.last_checked_at NULLS FIRST, a.id LIMIT ?`, targetID, s.ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due articles: %w", err)
	}
	defer rows.Close()
	var out []DueArticle
	for rows.Next() {
		var d DueArticle
		if err := rows.Scan(&d.ID, &d.URL, strCol{&d.NativePostID}); err != nil {
			return nil, fmt.Errorf("due articles: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
