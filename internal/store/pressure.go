package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// sentRow is the condition of a crawl_log row that stands for a request
// that reached a site: only those carry a duration. Refused ones (robots.txt,
// breaker, backoff, the address guard) do not.
const sentRow = `duration_ms IS NOT NULL`

// HostPressure is what the crawler asked of one host in a window: the
// public "pressure on source sites" table.
type HostPressure struct {
	Host       string `json:"host"`
	Requests   int    `json:"requests"`    // requests that reached the host
	Bytes      int64  `json:"bytes"`       // response body bytes it sent
	BytesSaved int64  `json:"bytes_saved"` // body bytes its 304 answers spared
	NotSent    int    `json:"not_sent"`    // requests zhizhi held back itself (robots.txt, breaker, backoff)
	Errors     int    `json:"errors"`      // answers that make the crawler back off: 5xx, 429, timeouts
	// BreakerTrips counts the times the host's 24-hour breaker opened
	// within the window.
	BreakerTrips int `json:"breaker_trips"`
}

// HostPressures returns the table for from <= occurred_at < to, busiest
// host first.
func (s *Store) HostPressures(ctx context.Context, from, to time.Time) ([]HostPressure, error) {
	rows, err := s.conn().query(ctx, `SELECT host,
			COALESCE(SUM(CASE WHEN `+sentRow+` THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN `+sentRow+` THEN bytes ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN `+sentRow+` THEN bytes_saved ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN `+sentRow+` THEN 0 ELSE 1 END), 0),
			COALESCE(SUM(CASE WHEN `+sentRow+` AND (http_status >= 500 OR http_status = 429 OR error_class = 'timeout') THEN 1 ELSE 0 END), 0)
		FROM crawl_log WHERE occurred_at >= ? AND occurred_at < ? AND host <> ''
		GROUP BY host`, s.ts(from), s.ts(to))
	if err != nil {
		return nil, fmt.Errorf("host pressure: %w", err)
	}
	byHost := map[string]*HostPressure{}
	var out []*HostPressure
	for rows.Next() {
		var h HostPressure
		if err := rows.Scan(&h.Host, &h.Requests, &h.Bytes, &h.BytesSaved, &h.NotSent, &h.Errors); err != nil {
			rows.Close()
			return nil, fmt.Errorf("host pressure: %w", err)
		}
		byHost[h.Host] = &h
		out = append(out, &h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("host pressure: %w", err)
	}
	// Breaker trips are kept on the host's state as a list of times.
	trips, err := s.conn().query(ctx, `SELECT host, breaker_trips FROM host_state WHERE breaker_trips IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("host pressure: breaker trips: %w", err)
	}
	defer trips.Close()
	for trips.Next() {
		var host string
		var raw json.RawMessage
		if err := trips.Scan(&host, jsonCol{&raw}); err != nil {
			return nil, fmt.Errorf("host pressure: breaker trips: %w", err)
		}
		var times []time.Time
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &times); err != nil {
				return nil, fmt.Errorf("host pressure: breaker trips of %s: %w", host, err)
			}
		}
		n := 0
		for _, t := range times {
			if !t.Before(from) && t.Before(to) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		h := byHost[host]
		if h == nil {
			h = &HostPressure{Host: host}
			byHost[host] = h
			out = append(out, h)
		}
		h.BreakerTrips = n
	}
	if err := trips.Err(); err != nil {
		return nil, fmt.Errorf("host pressure: breaker trips: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Requests != out[j].Requests {
			return out[i].Requests > out[j].Requests
		}
		return out[i].Host < out[j].Host
	})
	res := make([]HostPressure, len(out))
	for i, h := range out {
		res[i] = *h
	}
	return res, nil
}

// Sizes are the measured sizes the pressure-saving estimate needs.
type Sizes struct {
	Cards     int     `json:"cards"`
	CardBytes float64 `json:"card_bytes"` // mean bytes of what a card shows: title, summary, source address
	Pages     int     `json:"pages"`
	// PageBytes is the mean full size of a source page: its last full
	// body as the site sent it, plus the mean attachment bytes per article
	// of the sites whose attachments are taken.
	PageBytes float64 `json:"page_bytes"`
}

// MeasuredSizes measures Sizes over everything stored.
func (s *Store) MeasuredSizes(ctx context.Context) (Sizes, error) {
	var z Sizes
	octets := func(col string) string {
		if s.dialect == DialectPostgres {
			return `octet_length(` + col + `)`
		}
		return `length(CAST(` + col + ` AS BLOB))`
	}
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*), COALESCE(AVG(`+octets("title")+` + `+octets("summary")+` + `+octets("source_url")+`), 0)
		FROM summary_card`).Scan(&z.Cards, &z.CardBytes); err != nil {
		return z, fmt.Errorf("card sizes: %w", err)
	}
	var attach float64
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*), COALESCE(AVG(u.content_length), 0) FROM article a
		JOIN url_state u ON u.url_hash = a.url_hash WHERE u.content_length > 0`).Scan(&z.Pages, &z.PageBytes); err != nil {
		return z, fmt.Errorf("page sizes: %w", err)
	}
	if err := s.conn().queryRow(ctx, `SELECT COALESCE(AVG(t.total), 0) FROM (
			SELECT a.id, COALESCE(SUM(f.size_bytes), 0) AS total FROM article a
			JOIN crawl_site s ON s.id = a.site_id LEFT JOIN attachment f ON f.article_id = a.id
			WHERE s.access = 'full' GROUP BY a.id) t`).Scan(&attach); err != nil {
		return z, fmt.Errorf("attachment sizes: %w", err)
	}
	if z.Pages > 0 {
		z.PageBytes += attach
	}
	return z, nil
}
