package portal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
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

var beaconMeta = regexp.MustCompile(`<meta name="zhizhi-beacon" content="([0-9a-f]+)">`)

// pageToken is the beacon token a portal page carries for its script.
func pageToken(t *testing.T, r reply) string {
	t.Helper()
	m := beaconMeta.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("the page carries no beacon token:\n%s", r.body)
	}
	return m[1]
}

// TestBrowserUAScriptIsNotHuman: scripts that send a browser's user agent
// and read two cards 31 s apart, then click through, without running the
// page — one loads nothing else, one posts interaction events without the
// page's token — are not counted as people: the best band without a
// browser's proof is review, and the humans' ledger gets none of their
// views or clicks.
func TestBrowserUAScriptIsNotHuman(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a, b := w.cardPath("green"), w.cardPath("news00")
	scripts := []struct {
		ua     string
		beacon string
	}{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", ""},
		{browserUA, `{"scroll":5,"pointer":9,"key":2,"click":1,"visibility":1}`},
		{browserUA + " Edg/131.0.0.0", `{"scroll":5,"pointer":9,"key":2,"click":1,"visibility":1,"token":"` + strings.Repeat("ab", 32) + `"}`},
	}
	for _, s := range scripts {
		w.do(t, http.MethodGet, a, s.ua, nil)
		if s.beacon != "" {
			w.do(t, http.MethodPost, "/beacon", s.ua, strings.NewReader(s.beacon))
		}
		w.clock.Advance(31 * time.Second)
		w.do(t, http.MethodGet, b, s.ua, nil)
		w.clock.Advance(40 * time.Second)
		if r := w.do(t, http.MethodGet, w.goPath("news00"), s.ua, nil); r.status != http.StatusFound {
			t.Fatalf("door: %d", r.status)
		}
		w.clock.Advance(-71 * time.Second) // the next script reads at the same times
	}
	vs := w.visitors(t)
	if len(vs) != 3 {
		t.Fatalf("%d visitors, want 3: %s", len(vs), dump(vs))
	}
	for _, v := range vs {
		if v.Band == store.BandHuman || v.Pages != 2 || v.Clicks != 1 {
			t.Errorf("a script is scored %d (%s) with %d pages, %d click-throughs; want 2 pages, 1 click-through, not human: %s",
				v.Score, v.Band, v.Pages, v.Clicks, dump(v))
		}
	}
	today := w.today()
	w.clock.Advance(24 * time.Hour)
	if _, err := w.rec.CloseDays(ctx); err != nil {
		t.Fatal(err)
	}
	if tallies, err := w.st.HumanTallies(ctx, today); err != nil || len(tallies) != 0 {
		t.Errorf("the humans' ledger holds the scripts' reads: %v (%v)", tallies, err)
	}
	stats, err := w.st.PortalDayStats(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	if h := stats.Band(store.BandHuman); h.Visitors != 0 || h.PageViews != 0 {
		t.Errorf("the day counts %d human visitors and %d human page views, want none", h.Visitors, h.PageViews)
	}
}
