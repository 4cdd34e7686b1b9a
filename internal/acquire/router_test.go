package acquire

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// fetched fails the test unless /v1/fetch of body succeeded with provider.
func fetched(t *testing.T, a *answer, provider, reason string) *Document {
	t.Helper()
	if a.status != http.StatusOK || a.Data == nil {
		t.Fatalf("fetch: %d %.600s", a.status, a.raw)
	}
	acq := a.Data.Acquisition
	if acq.Provider != provider || !strings.Contains(acq.ProviderReason, reason) {
		t.Errorf("provider %q (%s); want %s, because %q", acq.Provider, acq.ProviderReason, provider, reason)
	}
	if (provider == providerBrowser) != (acq.Evidence.BrowserSeconds != nil) {
		t.Errorf("provider %s with browser_seconds %v", provider, acq.Evidence.BrowserSeconds)
	}
	return a.Data
}

// TestRouterChoosesTheProvider: POST /v1/fetch draws a page in the browser
// only when the caller allows it and something says the page needs it —
// the site's configuration, a cookie challenge the host answered, a
// direct answer that is a challenge or a script's empty shell — and says
// which provider ran and why. Without allow_browser a challenge is never
// answered as the page, a site configured for the browser is refused
// before it is asked, and cookies a browser visit earned let the direct
// client through.
func TestRouterChoosesTheProvider(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	e := newEnv(t, storetest.SQLite(t), withBrowser(js, nil))

	// A plain page: direct, whatever the intent.
	for _, allow := range []bool{false, true} {
		d := fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": smallURL("/article.html"), "allow_browser": allow}),
			providerDirect, "nothing says this host needs a browser")
		if !strings.Contains(*d.Markdown, "数据管理办法") {
			t.Errorf("plain page markdown: %s", *d.Markdown)
		}
	}

	// A shell its script fills in: answered as served without
	// allow_browser (the reason says what it lacks), drawn with it.
	shell := "http://" + jsHost + "/news.html"
	d := fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": shell}), providerDirect, "a shell its script fills in")
	if strings.Contains(*d.Markdown, jsText) || !strings.Contains(d.Acquisition.ProviderReason, "allow_browser") {
		t.Errorf("direct shell: reason %q, markdown %q", d.Acquisition.ProviderReason, *d.Markdown)
	}
	d = fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": shell, "allow_browser": true}),
		providerBrowser, "escalated to the browser: the direct answer has")
	if !strings.Contains(*d.Markdown, jsText) || d.Acquisition.Evidence.Attempts < 3 {
		t.Errorf("escalated shell: attempts %d (want the direct request, the page and its XHR), markdown %q",
			d.Acquisition.Evidence.Attempts, *d.Markdown)
	}

	// The city portal's cookie challenge.
	const city = "www.qingyuan.gov.test"
	e.client.SetSitePolicy(city, fetch.SitePolicy{RespectRobots: true, EscalateStatus: []int{http.StatusPreconditionFailed},
		EscalateSignatures: []string{sim.ChallengeMarker}})
	art := e.truth(t, city)
	a := e.post(t, "/v1/fetch", map[string]any{"url": art.URL, "formats": []string{"markdown", "rawHtml"}})
	if a.status != http.StatusUnprocessableEntity || a.Code != CodeBrowserRequired || !strings.Contains(a.Error, "cookie challenge") {
		t.Errorf("challenge without allow_browser: %d %.400s; want 422 %s", a.status, a.raw, CodeBrowserRequired)
	}
	if strings.Contains(string(a.raw), sim.ChallengeMarker) {
		t.Errorf("the challenge page reached the caller")
	}
	if _, _, err := e.st.FetchSnapshot(context.Background(), art.URL); err == nil {
		t.Errorf("the challenge page was kept as the page's snapshot")
	}
	// The host's history now says so: the browser at once, no direct try.
	before := len(e.w.AccessLog(city))
	d = fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": art.URL, "allow_browser": true, "formats": []string{"markdown", "rawHtml"}}),
		providerBrowser, "the host answered a cookie challenge on 2026-11-01")
	if !strings.Contains(*d.Markdown, art.Title) || strings.Contains(*d.RawHTML, sim.ChallengeMarker) {
		t.Errorf("the browser's answer is not the article %q", art.Title)
	}
	if subs := d.Acquisition.Evidence.Subrequests; len(subs) == 0 || subs[0].Status != http.StatusPreconditionFailed {
		t.Errorf("subrequests %+v; want the browser to meet the challenge itself (no direct try first)", subs)
	}
	if n := len(e.w.AccessLog(city)) - before; n > len(d.Acquisition.Evidence.Subrequests) {
		t.Errorf("the host saw %d requests for %d of the browser's", n, len(d.Acquisition.Evidence.Subrequests))
	}
	// Its cookies are in the pool: the direct client sends them.
	d = fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": art.URL}), providerDirect, "cookies a browser visit earned")
	if !strings.Contains(*d.Markdown, art.Title) {
		t.Errorf("direct with the cookies: not the article: %.300s", *d.Markdown)
	}
	// Direct tries, browser visits and their reloads: all at the host's
	// pace, one at a time, as its own access log shows.
	for _, v := range sim.PolitenessViolations(city, e.w.AccessLog(city), 0) {
		t.Error(v)
	}

	// A site whose configuration fetches it with the browser.
	e.client.SetSitePolicy(jsHost2, fetch.SitePolicy{RespectRobots: true, Strategy: model.StrategyBrowser})
	u2 := "http://" + jsHost2 + "/news.html"
	asked := js.count("/news.html")
	for _, c := range []struct {
		name string
		body map[string]any
		why  string
	}{
		{"no allow_browser", map[string]any{"url": u2}, "allow_browser"},
		{"max_cost too low", map[string]any{"url": u2, "allow_browser": true, "max_cost": map[string]any{"browser_seconds": 2}}, "max_cost.browser_seconds (2)"},
	} {
		a := e.post(t, "/v1/fetch", c.body)
		if a.status != http.StatusUnprocessableEntity || a.Code != CodeBrowserRequired ||
			!strings.Contains(a.Error, "configuration") || !strings.Contains(a.Error, c.why) {
			t.Errorf("%s: %d %s; want 422 %s naming the configuration and %s", c.name, a.status, a.raw, CodeBrowserRequired, c.why)
		}
	}
	if js.count("/news.html") != asked {
		t.Errorf("a site needing the browser was asked although the request did not allow it")
	}
	d = fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": u2, "allow_browser": true, "max_cost": map[string]any{"browser_seconds": 10}}),
		providerBrowser, "the site's configuration fetches it with the browser")
	if !strings.Contains(*d.Markdown, jsText) || d.Acquisition.Evidence.TimeoutMS > 30000 {
		t.Errorf("configured site: timeout %d ms, markdown %q", d.Acquisition.Evidence.TimeoutMS, *d.Markdown)
	}

	// POST /v1/render takes no intent: it is the browser.
	if a := e.post(t, "/v1/render", map[string]any{"url": shell, "allow_browser": false}); a.status != http.StatusBadRequest ||
		!strings.HasPrefix(a.Error, "allow_browser") {
		t.Errorf("render with intent: %d %s", a.status, a.raw)
	}
}

// TestRouterWithoutBrowser: a server without a browser fetches directly,
// refuses (503) a site configured for the browser, and says so.
func TestRouterWithoutBrowser(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.client.SetSitePolicy(smallHost, fetch.SitePolicy{RespectRobots: true, Strategy: model.StrategyBrowser})
	a := e.post(t, "/v1/fetch", map[string]any{"url": smallURL("/article.html"), "allow_browser": true})
	if a.status != http.StatusServiceUnavailable || a.Code != CodeBrowserUnavailable || !strings.Contains(a.Error, "configuration") {
		t.Errorf("configured for the browser, no browser: %d %s", a.status, a.raw)
	}
	if n := e.small.count("/article.html"); n != 0 {
		t.Errorf("the page was asked for %d times", n)
	}
	fetched(t, e.post(t, "/v1/fetch", map[string]any{"url": e.truth(t, "www.gov.test").URL, "allow_browser": true}),
		providerDirect, "nothing says")
}

// TestRouterIntentBadRequests: the intent fields are checked like every
// other field.
func TestRouterIntentBadRequests(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, c := range []struct{ body, field string }{
		{`{"url": "http://www.small.gov.test/a", "allow_browser": "yes"}`, "allow_browser"},
		{`{"url": "http://www.small.gov.test/a", "allow_async": 1}`, "allow_async"},
		{`{"url": "http://www.small.gov.test/a", "max_cost": 5}`, "max_cost"},
		{`{"url": "http://www.small.gov.test/a", "max_cost": {"dollars": 1}}`, "max_cost.dollars"},
		{`{"url": "http://www.small.gov.test/a", "max_cost": {"browser_seconds": -1}}`, "max_cost.browser_seconds"},
	} {
		a := e.post(t, "/v1/fetch", c.body)
		if a.status != http.StatusBadRequest || a.Code != CodeInvalidRequest || !strings.HasPrefix(a.Error, c.field) {
			t.Errorf("%s: %d %s; want 400 naming %s", c.body, a.status, a.raw, c.field)
		}
	}
}

// TestRouterBudget: the router spends only the browser seconds a key has
// left: with too few it fetches a shell directly and says why, and refuses
// a site configured for the browser with 402 naming the budget before it
// is asked; with enough, a render is held its time and charged what it
// used, and a direct page allowed the browser is charged no browser
// second.
func TestRouterBudget(t *testing.T) {
	needChromium(t)
	storetest.ForEachDialect(t, testRouterBudget)
}

func testRouterBudget(t *testing.T, st *store.Store) {
	js := newJSSite(t)
	g := newGuarded(t, st, withBrowser(js, nil))
	ctx := context.Background()
	if _, err := g.users.CreateUser(ctx, "test", "alice", "a long enough passphrase", auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	secret, k, err := g.users.CreateAPIKey(ctx, "test", "alice", "agent", []string{auth.ScopeAcquire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	limit := func(secs int64) {
		t.Helper()
		if err := g.b.SetLimits(ctx, "test", k.ID, budget.Limits{
			PerDay: budget.Cost{Requests: 20, Bytes: 1 << 30, BrowserSeconds: secs}, RequestsPerMinute: 60}); err != nil {
			t.Fatal(err)
		}
	}
	hdr := []string{"Authorization", "Bearer " + secret}
	shell := "http://" + jsHost + "/news.html"
	g.client.SetSitePolicy(jsHost2, fetch.SitePolicy{RespectRobots: true, Strategy: model.StrategyBrowser})

	limit(3)
	fetched(t, g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": shell, "allow_browser": true}, hdr...),
		providerDirect, "the key has 3 browser seconds left today")
	asked := js.count("/news.html")
	a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": "http://" + jsHost2 + "/news.html", "allow_browser": true}, hdr...)
	if a.status != http.StatusPaymentRequired || a.Code != CodeBudgetExceeded || !strings.Contains(a.Error, "browser seconds") {
		t.Errorf("configured site, 3 browser seconds left: %d %s; want 402 naming the browser seconds", a.status, a.raw)
	}
	if js.count("/news.html") != asked {
		t.Errorf("the site was asked although the key could not pay for its browser")
	}
	if u := usageOf(t, g, k.ID); u.Requests.Used != 1 || u.BrowserSeconds.Used != 0 {
		t.Errorf("usage %+v; want the direct fetch only", u)
	}

	limit(100)
	d := fetched(t, g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": shell, "allow_browser": true, "timeout": 20000}, hdr...),
		providerBrowser, "escalated to the browser")
	u := usageOf(t, g, k.ID)
	if used := u.BrowserSeconds.Used; used < 1 || used > 20 || u.BrowserSeconds.Reserved != 0 || u.Requests.Used != 2 {
		t.Errorf("after a render of %.3f s within 20: %+v", *d.Acquisition.Evidence.BrowserSeconds, u)
	}
	fetched(t, g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": smallURL("/article.html"), "allow_browser": true}, hdr...),
		providerDirect, "nothing says")
	if after := usageOf(t, g, k.ID); after.BrowserSeconds.Used != u.BrowserSeconds.Used || after.BrowserSeconds.Reserved != 0 {
		t.Errorf("a direct page allowed the browser was charged browser seconds: %+v then %+v", u.BrowserSeconds, after.BrowserSeconds)
	}
}
