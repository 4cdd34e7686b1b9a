package acquire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// guarded is the API as serve mounts it (Served): keys and sessions of
// users, budgets on the env's clock.
type guarded struct {
	*env
	users *auth.Service
	b     *budget.Service
	srv   *httptest.Server
}

func newGuarded(t *testing.T, st *store.Store, opts ...envOption) *guarded {
	t.Helper()
	e := newEnv(t, st, opts...)
	cheap := &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
	g := &guarded{env: e, users: auth.New(e.st, auth.Options{Now: e.clock.Now, PasswordParams: cheap}),
		b: budget.New(e.st, e.clock.Now)}
	a, err := New(Deps{Store: e.st, Client: e.client, Now: e.clock.Now, Logger: quiet(), Budget: g.b,
		Render: e.api.d.Render, Jobs: e.api.d.Jobs, CrawlPageSize: e.api.d.CrawlPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := e.api.d.Jobs.(*localJobs); ok {
		l.mu.Lock()
		l.api = a // crawl jobs are worked, and charged, as served
		l.mu.Unlock()
	}
	g.srv = httptest.NewServer(a.Served(g.users, g.b))
	t.Cleanup(g.srv.Close)
	return g
}

// call sends a request with the headers in hdr ("Cookie" or
// "Authorization") and checks the answer against openapi.yaml.
func (g *guarded) call(t *testing.T, method, path string, body any, hdr ...string) *answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := &answer{status: resp.StatusCode, header: resp.Header}
	a.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(a.raw, a); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%v): %s", method, path, err, a.raw)
	}
	checkSpecOf(t, method, path, a)
	return a
}

// session signs name in and returns its session cookie header.
func (g *guarded) session(t *testing.T, name, password string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if _, err := g.users.Login(rec, httptest.NewRequest(http.MethodPost, "/admin/login", nil), name, password); err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.CookieName {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login %s set no session cookie", name)
	return ""
}

// TestBudgetsAndScope: the API as serve mounts it refuses a caller without
// a key (401) or without the acquire scope (403) before anything is
// counted; an acquire key is charged one request and the bytes downloaded
// for each page it gets, nothing for a request refused before it was sent
// (robots.txt, the SSRF guard), and past its daily requests budget is
// answered 402 naming the budget without the site being asked; an
// operator's console session is allowed and not metered, a viewer's is
// refused.
func TestBudgetsAndScope(t *testing.T) {
	storetest.ForEachDialect(t, testBudgetsAndScope)
}

func testBudgetsAndScope(t *testing.T, st *store.Store) {
	g := newGuarded(t, st)
	ctx := context.Background()
	const pw = "a long enough passphrase"
	if _, err := g.users.CreateUser(ctx, "test", "alice", pw, auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	if _, err := g.users.CreateUser(ctx, "test", "bob", pw, auth.RoleViewer); err != nil {
		t.Fatal(err)
	}
	acq, k, err := g.users.CreateAPIKey(ctx, "test", "alice", "agent", []string{auth.ScopeAcquire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.b.SetLimits(ctx, "test", k.ID, budget.Limits{
		PerDay: budget.Cost{Requests: 2, Bytes: 1 << 30}, RequestsPerMinute: 60}); err != nil {
		t.Fatal(err)
	}
	read, _, err := g.users.CreateAPIKey(ctx, "test", "alice", "reader", []string{auth.ScopeRead}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) []string { return []string{"Authorization", "Bearer " + k} }
	pages := []sim.TruthArticle{g.truth(t, "www.gov.test"), g.truth(t, "www.gd.gov.test"), g.truth(t, "www.yingde.gov.test")}
	var refused sim.TruthArticle
	for _, a := range g.w.Truth() {
		if a.RobotsDisallowed {
			refused = a
			break
		}
	}
	if refused.URL == "" {
		t.Fatalf("the sim has no page robots.txt disallows")
	}
	usage := func() budget.Usage {
		t.Helper()
		a := g.call(t, http.MethodGet, "/v1/usage", nil, key(acq)...)
		var u struct {
			Data budget.Usage `json:"data"`
		}
		if a.status != http.StatusOK || json.Unmarshal(a.raw, &u) != nil {
			t.Fatalf("GET /v1/usage: %d %s", a.status, a.raw)
		}
		return u.Data
	}

	// Refused before anything is counted.
	dials := g.dialCount()
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
		code   string
	}{
		{"no key", nil, http.StatusUnauthorized, CodeUnauthorized},
		{"unknown key", key("zk_not_a_key"), http.StatusUnauthorized, CodeUnauthorized},
		{"read key", key(read), http.StatusForbidden, CodeInsufficientScope},
		{"viewer's session", []string{"Cookie", g.session(t, "bob", pw)}, http.StatusForbidden, CodeInsufficientScope},
	} {
		for _, path := range []string{"/v1/fetch", "/v2/scrape", "/v1/usage"} {
			method, body := http.MethodPost, any(map[string]any{"url": pages[0].URL})
			if path == "/v1/usage" {
				method, body = http.MethodGet, nil
			}
			a := g.call(t, method, path, body, c.hdr...)
			if a.status != c.status || a.Success || a.Code != c.code || a.Error == "" {
				t.Errorf("%s, %s %s: %d %s; want %d %s", c.name, method, path, a.status, a.raw, c.status, c.code)
			}
		}
	}
	if g.dialCount() != dials {
		t.Errorf("refused callers made the client dial %d times", g.dialCount()-dials)
	}

	// Refusals before sending are billed nothing.
	if a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": refused.URL}, key(acq)...); a.status != http.StatusForbidden || a.Code != CodeRobotsDisallowed {
		t.Errorf("robots.txt refusal: %d %s", a.status, a.raw)
	}
	if a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": "http://127.0.0.1:1/x"}, key(acq)...); a.status != http.StatusForbidden || a.Code != CodeURLRefused {
		t.Errorf("SSRF refusal: %d %s", a.status, a.raw)
	}
	if u := usage(); u.Requests.Used != 0 || u.Requests.Reserved != 0 || u.Bytes.Used != 0 || u.Bytes.Reserved != 0 {
		t.Errorf("after two refusals the key was charged: %+v", u)
	}

	// Each page is one request and its wire bytes.
	var wire int64
	for i, p := range pages[:2] {
		a := g.call(t, http.MethodPost, []string{"/v1/fetch", "/v2/scrape"}[i], map[string]any{"url": p.URL}, key(acq)...)
		if a.status != http.StatusOK || a.Data == nil {
			t.Fatalf("fetch %s: %d %s", p.URL, a.status, a.raw)
		}
		if a.header.Get("X-RateLimit-Limit") != "60" || a.header.Get("X-RateLimit-Remaining") == "" || a.header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("rate-limit headers: %v", a.header)
		}
		wire += a.Data.Acquisition.Evidence.WireBytes
		u := usage()
		if u.Requests.Used != int64(i+1) || u.Bytes.Used != wire || u.Requests.Reserved != 0 || u.Bytes.Reserved != 0 {
			t.Errorf("after %d pages (%d wire bytes) usage is %+v", i+1, wire, u)
		}
	}
	if wire <= 0 {
		t.Errorf("the pages came with no wire bytes")
	}

	// Past the budget: 402 naming it, and the site is not asked.
	dials = g.dialCount()
	a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": pages[2].URL}, key(acq)...)
	if a.status != http.StatusPaymentRequired || a.Code != "BUDGET_EXCEEDED" || !strings.Contains(a.Error, "requests") || !strings.Contains(a.Error, "2 of 2") {
		t.Errorf("third page past a budget of 2 requests: %d %s", a.status, a.raw)
	}
	if g.dialCount() != dials {
		t.Errorf("a request over budget made the client dial")
	}
	if u := usage(); u.Requests.Used != 2 || u.Requests.Remaining != 0 {
		t.Errorf("after the refusal usage is %+v", u)
	}

	// An operator's session may fetch; it is not metered and has no usage.
	alice := []string{"Cookie", g.session(t, "alice", pw)}
	if a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": pages[2].URL}, alice...); a.status != http.StatusOK {
		t.Errorf("operator's session: %d %s", a.status, a.raw)
	}
	if a := g.call(t, http.MethodGet, "/v1/usage", nil, alice...); a.status != http.StatusForbidden {
		t.Errorf("usage of a session: %d %s", a.status, a.raw)
	}
	if u := usage(); u.Requests.Used != 2 {
		t.Errorf("the session's fetch was charged to the key: %+v", u)
	}

	// A key whose user is no longer an operator may not acquire.
	if err := g.users.SetRole(ctx, "test", "alice", auth.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if a := g.call(t, http.MethodPost, "/v1/fetch", map[string]any{"url": pages[2].URL}, key(acq)...); a.status != http.StatusForbidden ||
		a.Code != CodeInsufficientScope || !strings.Contains(a.Error, "viewer") {
		t.Errorf("the key of a demoted user: %d %s", a.status, a.raw)
	}
}

// TestRenderIsMetered: a key's render holds its whole browser time before
// it starts and is charged one request, the bytes the page's requests
// brought and the browser seconds it used (whole seconds, a started one
// counting); a key whose browser seconds cannot cover a render's time is
// answered 402 naming that budget, and the site is not asked.
func TestRenderIsMetered(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	g := newGuarded(t, storetest.SQLite(t), withBrowser(js, nil))
	ctx := context.Background()
	if _, err := g.users.CreateUser(ctx, "test", "alice", "a long enough passphrase", auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	acq, k, err := g.users.CreateAPIKey(ctx, "test", "alice", "agent", []string{auth.ScopeAcquire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.b.SetLimits(ctx, "test", k.ID, budget.Limits{
		PerDay: budget.Cost{Requests: 10, Bytes: 1 << 30, BrowserSeconds: 61}, RequestsPerMinute: 60}); err != nil {
		t.Fatal(err)
	}
	hdr := []string{"Authorization", "Bearer " + acq}
	u := "http://" + jsHost + "/news.html"
	a := g.call(t, http.MethodPost, "/v1/render", map[string]any{"url": u, "timeout": 60000}, hdr...)
	if a.status != http.StatusOK || a.Data == nil || a.Data.Acquisition.Evidence.BrowserSeconds == nil {
		t.Fatalf("render: %d %.600s", a.status, a.raw)
	}
	used, err := g.b.Usage(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	secs := *a.Data.Acquisition.Evidence.BrowserSeconds
	want := int64(math.Ceil(secs))
	if want < 1 {
		want = 1
	}
	if used.Requests.Used != 1 || used.BrowserSeconds.Used < want || used.BrowserSeconds.Used > 60 ||
		used.BrowserSeconds.Reserved != 0 || used.Bytes.Used <= 0 {
		t.Errorf("after one render of %.3f browser seconds: requests %+v, browser seconds %+v, bytes %+v",
			secs, used.Requests, used.BrowserSeconds, used.Bytes)
	}

	// 61 − what was used is less than a 60-second render's hold.
	before := js.count("/news.html")
	a = g.call(t, http.MethodPost, "/v1/render", map[string]any{"url": u, "timeout": 60000}, hdr...)
	if a.status != http.StatusPaymentRequired || a.Code != "BUDGET_EXCEEDED" || !strings.Contains(a.Error, "browser") {
		t.Errorf("a render longer than the browser seconds left: %d %s; want 402 naming the browser seconds", a.status, a.raw)
	}
	if js.count("/news.html") != before {
		t.Errorf("the site was asked for a render over budget")
	}
}
