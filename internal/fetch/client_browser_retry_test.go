package fetch

import (
	"context"
	"net/http"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// TestBrowserRetryAfterIsObeyed: a 429 with Retry-After met by a page the
// browser tier loads holds the host exactly as a direct answer does: the
// next request reaches the site no sooner than Retry-After later (the
// backoff alone would be 4 s).
func TestBrowserRetryAfterIsObeyed(t *testing.T) {
	needChromium(t)
	e := newSimEnv(t, 1, ClientOptions{Browser: Chromium("", quietLogger())})
	e.advancing(t, false)
	e.c.SetSitePolicy(yingde, SitePolicy{RespectRobots: true, Strategy: TierBrowser})
	u := truthURL(t, e.w, yingde, "/ydfgw/")
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.Fault429, RetryAfter: "120", PathPrefix: "/ydfgw/", Count: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if resp, err := e.c.Do(ctx, Request{URL: u, Purpose: model.PurposeDetail}); err != nil || resp.Tier != TierBrowser || resp.Status != http.StatusTooManyRequests {
		t.Fatalf("browser visit: %+v, %v; want the 429 through the browser tier", resp, err)
	}
	if r := mustDo(t, e.c, Request{URL: u, Tier: TierDirect}); r.Status != http.StatusOK {
		t.Fatalf("after the wait: status %d", r.Status)
	}
	// The page's next request (not the favicon the same page load asked
	// for before its answer was judged).
	var got429, next time.Time
	for _, a := range e.w.AccessLog(yingde) {
		switch {
		case a.Status == http.StatusTooManyRequests:
			got429 = a.Arrived
		case !got429.IsZero() && next.IsZero() && "http://"+yingde+a.Path == u:
			next = a.Arrived
		}
	}
	if got429.IsZero() || next.IsZero() {
		t.Fatalf("sim log %+v: want the 429 and a request after it", e.w.AccessLog(yingde))
	}
	if gap := next.Sub(got429); gap < 120*time.Second {
		t.Errorf("the request after the browser's 429 (Retry-After: 120) came %v later, want at least 120s", gap)
	}
	e.c.Close()
}
