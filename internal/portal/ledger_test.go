package portal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"zhizhi/internal/model"
)

// TestDashboardReadOnceAMinute: the public dashboard is read from the
// database at most once a minute per day asked, however often anyone asks;
// a minute later it shows what changed.
func TestDashboardReadOnceAMinute(t *testing.T) {
	w := newWorld(t)
	requests := func() int {
		t.Helper()
		r := w.do(t, http.MethodGet, "/ledger.json", browserUA, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET /ledger.json: %d %s", r.status, r.body)
		}
		var d struct {
			Day struct {
				Crawler struct {
					Requests int `json:"requests"`
				} `json:"crawler"`
			} `json:"day"`
		}
		if err := json.Unmarshal([]byte(r.body), &d); err != nil {
			t.Fatal(err)
		}
		return d.Day.Crawler.Requests
	}
	before := requests()
	ms := 5
	if err := w.st.InsertCrawlLog(context.Background(), &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list",
		Method: "GET", DurationMS: &ms, OccurredAt: w.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(59 * time.Second)
	if got := requests(); got != before {
		t.Fatalf("59 s later the dashboard reads %d requests, want the %d of its last reading", got, before)
	}
	w.clock.Advance(2 * time.Second)
	if got := requests(); got != before+1 {
		t.Fatalf("61 s later the dashboard reads %d requests, want %d", got, before+1)
	}
}
