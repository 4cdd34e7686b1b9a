package store

import (
	"context"
	"fmt"

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
