package store_test

import (
	"context"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestHostHistory: what the acquisition API's router reads of a host —
// its latest cookie challenge and the crawler's pages drawn by the browser
// — counts only that host, the window asked for, successful browser rows
// and the purposes named.
func TestHostHistory(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
		rows := []model.CrawlLog{
			{Host: "a.gov.test", Purpose: "detail", Strategy: "httpx", ErrorClass: "challenge", OccurredAt: now.Add(-40 * 24 * time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Strategy: "httpx", ErrorClass: "challenge", OccurredAt: now.Add(-3 * time.Hour)},
			{Host: "a.gov.test", Purpose: "list", Strategy: "httpx", ErrorClass: "challenge", OccurredAt: now.Add(-5 * time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Strategy: "playwright", Success: true, OccurredAt: now.Add(-3 * time.Hour)},
			{Host: "a.gov.test", Purpose: "list", Strategy: "playwright", Success: true, OccurredAt: now.Add(-2 * time.Hour)},
			{Host: "a.gov.test", Purpose: "probe", Strategy: "playwright", Success: true, OccurredAt: now.Add(-time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Strategy: "playwright", Success: false, ErrorClass: "browser", OccurredAt: now.Add(-time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Strategy: "playwright", Success: true, OccurredAt: now.Add(-31 * 24 * time.Hour)},
			{Host: "b.gov.test", Purpose: "detail", Strategy: "playwright", Success: true, ErrorClass: "", OccurredAt: now.Add(-time.Hour)},
			{Host: "b.gov.test", Purpose: "detail", Strategy: "httpx", ErrorClass: "challenge", OccurredAt: now.Add(-time.Hour)},
		}
		for i := range rows {
			if err := s.InsertCrawlLog(ctx, &rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		q := store.HostHistoryQuery{Host: "a.gov.test", Since: now.Add(-30 * 24 * time.Hour), ChallengeClass: "challenge",
			BrowserStrategy: "playwright", Purposes: []string{"index", "list", "detail"}}
		h, err := s.HostHistory(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if h.LastChallenge == nil || !h.LastChallenge.Equal(now.Add(-3*time.Hour)) || h.BrowserPages != 2 {
			t.Errorf("history %+v (last challenge %v); want the challenge 3 h ago and 2 browser pages", h, h.LastChallenge)
		}
		q.Host = "c.gov.test"
		if h, err := s.HostHistory(ctx, q); err != nil || h.LastChallenge != nil || h.BrowserPages != 0 {
			t.Errorf("a host never seen: %+v, %v; want nothing", h, err)
		}
	})
}
