package fetch

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/browser"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is required in CI: %v", err)
		}
		t.Skipf("chromium not installed (%v); apt-get install chromium", err)
	}
}

// TestCityPortalChallenge: the city portal answers a direct request with
// its 412 cookie challenge; the browser tier passes it once, the harvested
// cookie goes into the pool, and the next direct request gets in with it.
// Every request, both tiers, is in crawl_log; no Chromium is left behind.
func TestCityPortalChallenge(t *testing.T) {
	needChromium(t)
	var (
		mu      sync.Mutex
		started []*browser.Browser
	)
	chromium := Chromium("", quietLogger())
	e := newSimEnv(t, 1, ClientOptions{Browser: func(ctx context.Context, cfg BrowserConfig) (Renderer, error) {
		r, err := chromium(ctx, cfg)
		if b, ok := r.(*browser.Browser); ok {
			mu.Lock()
			started = append(started, b)
			mu.Unlock()
		}
		return r, err
	}})
	e.advancing(t, false)
	e.c.SetSitePolicy(qingyuan, SitePolicy{
		SiteID: 0, RespectRobots: true, Strategy: TierDirect,
		EscalateStatus: []int{412}, EscalateSignatures: []string{sim.ChallengeMarker},
		CookieTTL: 20 * time.Minute,
	})
	index := "http://" + qingyuan + "/qyfgw/gkmlpt/index"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	first, err := e.c.Do(ctx, Request{URL: index, Purpose: model.PurposeIndex})
	if err != nil {
		t.Fatalf("first visit: %v", err)
	}
	if first.Tier != TierBrowser || first.Status != 200 || !strings.Contains(string(first.Body), "_CONFIG") {
		t.Fatalf("first visit: tier %s status %d, body %.200s", first.Tier, first.Status, first.Body)
	}
	cookies, err := e.st.ValidCookies(ctx, qingyuan, e.clock.Now())
	if err != nil || len(cookies) == 0 {
		t.Fatalf("cookie pool after the browser: %v (%v)", cookies, err)
	}
	var clearance *model.Cookie
	for i := range cookies {
		if cookies[i].Name == sim.ClearanceCookie {
			clearance = &cookies[i]
		}
	}
	if clearance == nil || clearance.Source != "browser" || clearance.ExpiresAt == nil ||
		clearance.ExpiresAt.After(e.clock.Now().Add(20*time.Minute)) {
		t.Fatalf("clearance cookie %+v, want source browser, expiring within the cookie TTL", clearance)
	}
	before := len(e.w.AccessLog(qingyuan))

	for _, u := range []string{index, truthURL(t, e.w, qingyuan, "/qyfgw/")} {
		r, err := e.c.Do(ctx, Request{URL: u, Purpose: model.PurposeDetail})
		if err != nil {
			t.Fatalf("direct with the cookie: %v", err)
		}
		if r.Tier != TierDirect || r.Status != 200 {
			t.Errorf("%s: tier %s status %d, want the direct tier's 200", u, r.Tier, r.Status)
		}
	}
	log := e.w.AccessLog(qingyuan)
	for _, a := range log[before:] {
		if a.UserAgent != e.c.UserAgent() || a.Status != 200 || !a.Cleared {
			t.Errorf("after the browser: %s %s UA %q status %d cleared %v", a.Method, a.Path, a.UserAgent, a.Status, a.Cleared)
		}
	}
	sawBrowser := false
	for _, a := range log[:before] {
		if strings.Contains(a.UserAgent, "Chrome") && strings.HasSuffix(a.UserAgent, e.c.UserAgent()) {
			sawBrowser = true
		}
		if a.InFlightAtArrival != 0 {
			t.Errorf("%s arrived with %d in flight", a.Path, a.InFlightAtArrival)
		}
	}
	if !sawBrowser {
		t.Error("the sim never saw the browser's User-Agent carrying zhizhi's token")
	}
	rows := crawlLogRows(t, e.st, qingyuan)
	if got := wireRows(rows); got != len(log) {
		t.Errorf("crawl_log has %d rows that reached the site, the sim saw %d requests", got, len(log))
	}
	tiers := map[string]int{}
	for _, r := range rows {
		tiers[r.Strategy]++
	}
	for _, r := range rows {
		t.Logf("crawl_log: %s %s %s %s status=%v class=%s", r.Strategy, r.Purpose, r.Method, r.ArticleURL, deref(r.HTTPStatus), r.ErrorClass)
	}
	if tiers[TierBrowser] == 0 || tiers[TierDirect] == 0 {
		t.Errorf("crawl_log tiers %v, want rows of both", tiers)
	}

	e.c.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(started) != 1 {
		t.Fatalf("%d browsers started, want 1", len(started))
	}
	select {
	case <-started[0].Done():
	case <-time.After(15 * time.Second):
		t.Error("Chromium still running after Close")
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
