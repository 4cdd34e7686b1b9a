package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store"
)

// TestServeConsoleAndAPI: `zhizhi serve` answers the admin console and the
// REST API with the users and API keys made by `zhizhi user add` and
// `zhizhi apikey create`: signed out, the console asks for a login and the
// API answers 401; signed in (or with a key) both work; a key's scope and
// a user's role bound what it may do; a state-changing request from another
// web site is refused.
func TestServeConsoleAndAPI(t *testing.T) {
	waitBound(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st, "gd_ref_wjk") // one small target: this test is about HTTP
	run := func(stdin string, args ...string) string {
		t.Helper()
		return sw.zhizhi(t, stdin, args...)
	}
	run("s3cret-pass-1\n", "user", "add", "alice", "--role", "operator", "--password-stdin")
	out := run("", "apikey", "create", "--user", "alice", "--name", "rag", "--scope", "read")
	key := regexp.MustCompile(`zk_[A-Za-z0-9_-]+`).FindString(out)
	if key == "" {
		t.Fatalf("apikey create printed no key:\n%s", out)
	}
	p := sw.startServe(t, sw.dataDir)
	defer p.stop(t)
	base := "http://" + p.addr
	noFollow := func(req *http.Request, via []*http.Request) error { return http.ErrUseLastResponse }
	anon := &http.Client{CheckRedirect: noFollow}
	do := func(c *http.Client, method, path string, body io.Reader, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	// The public side: the portal, its robots.txt, the dashboard and the
	// seal key, none of them setting a cookie.
	for _, pub := range []struct{ path, want string }{
		{"/", "政务信息摘要"},
		{"/robots.txt", "Disallow: /admin/"},
		{"/ledger", "透明账本"},
		{"/ledger.json", `"crawler"`},
		{"/.well-known/zhizhi-ledger.key", "zhizhi-ledger+"},
	} {
		resp, body := do(anon, "GET", pub.path, nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, pub.want) || len(resp.Header.Values("Set-Cookie")) > 0 {
			t.Errorf("GET %s = %d, cookies %q, body %.200q; want 200 with %q and no cookie", pub.path, resp.StatusCode,
				resp.Header.Values("Set-Cookie"), body, pub.want)
		}
	}
	if resp, _ := do(anon, "GET", "/admin/", nil, nil); resp.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(resp.Header.Get("Location"), "/admin/login") {
		t.Errorf("signed out, GET /admin/ = %d → %q, want 303 to the login page", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := do(anon, "GET", "/api/v1/sites", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"error"`) {
		t.Errorf("signed out, GET /api/v1/sites = %d %s, want 401 with a JSON error", resp.StatusCode, body)
	}

	// A key with the read scope reads, and may not crawl.
	bearer := map[string]string{"Authorization": "Bearer " + key}
	resp, body = do(anon, "GET", "/api/v1/sites", nil, bearer)
	var sites struct {
		Items []json.RawMessage `json:"items"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &sites) != nil || len(sites.Items) == 0 {
		t.Fatalf("GET /api/v1/sites with a read key = %d %.300s, want the sites", resp.StatusCode, body)
	}
	tg, err := sw.st.TargetByCode(t.Context(), "gd_ref_wjk")
	if err != nil {
		t.Fatal(err)
	}
	crawlPath := "/api/v1/targets/" + strconv.FormatInt(tg.ID, 10) + "/crawl"
	if resp, body := do(anon, "POST", crawlPath, nil, bearer); resp.StatusCode != http.StatusForbidden {
		t.Errorf("crawl now with a read-only key = %d %s, want 403", resp.StatusCode, body)
	}

	// Signing in to the console: the session then works for both.
	jar, _ := cookiejar.New(nil)
	alice := &http.Client{Jar: jar, CheckRedirect: noFollow}
	form := url.Values{"username": {"alice"}, "password": {"s3cret-pass-1"}, "next": {"/admin/"}}
	formHdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": base, "Sec-Fetch-Site": "same-origin"}
	if resp, body := do(alice, "POST", "/admin/login", strings.NewReader(form.Encode()), formHdr); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login = %d %.300s, want 303", resp.StatusCode, body)
	}
	if resp, body := do(alice, "GET", "/admin/", nil, nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "知止") {
		t.Errorf("signed in, GET /admin/ = %d, want the overview:\n%.300s", resp.StatusCode, body)
	}
	if resp, body := do(alice, "GET", "/api/v1/sites", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("signed in, GET /api/v1/sites = %d %.300s, want 200", resp.StatusCode, body)
	}

	// The onboarding wizard gets serve's own polite client and configuration.
	if resp, body := do(alice, "GET", "/admin/onboard", nil, nil); resp.StatusCode != http.StatusOK || strings.Contains(body, "未启用") {
		t.Errorf("signed in, GET /admin/onboard = %d, want the wizard enabled:\n%.500s", resp.StatusCode, body)
	}

	// The same request from another web site, with alice's cookie, is refused.
	crossHdr := map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	if resp, _ := do(alice, "POST", crawlPath, nil, crossHdr); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site crawl now = %d, want 403", resp.StatusCode)
	}
	if resp, _ := do(alice, "POST", "/admin/logout", nil, crossHdr); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site logout = %d, want 403", resp.StatusCode)
	}
	// From the console itself, the operator may crawl now.
	sameHdr := map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}
	if resp, body := do(alice, "POST", crawlPath, nil, sameHdr); resp.StatusCode != http.StatusAccepted {
		t.Errorf("crawl now from the console's origin = %d %.300s, want 202", resp.StatusCode, body)
	}
	// A dry-run of the stored target: serve's own crawler against the site.
	dryHdr := map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}
	resp, body = do(alice, "POST", "/api/v1/targets/"+strconv.FormatInt(tg.ID, 10)+"/dry-run", strings.NewReader("{}"), dryHdr)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"green":true`) {
		t.Errorf("dry-run of %s = %d, want 200 and green:\n%.600s", tg.TargetCode, resp.StatusCode, body)
	}
	entries, err := sw.st.ListAudit(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e store.AuditEntry) bool {
		return e.Action == "target.crawl_now" && e.Actor == "user:alice"
	}) {
		t.Errorf("no audit entry for alice's crawl now: %+v", entries)
	}
}

// TestDemoServeKeepsItsAccount: `zhizhi demo --serve` runs the service on
// the simulated web with an admin account "demo" whose password it makes
// once, keeps in the data directory and prints; it signs in; a second start
// keeps the same password; SIGTERM stops it with exit 0.
func TestDemoServeKeepsItsAccount(t *testing.T) {
	dir := t.TempDir()
	env := []string{"ZHIZHI_DEMO_DIR=" + dir, "ZHIZHI_LISTEN=127.0.0.1:0",
		"ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium"), "TMPDIR=" + dir}
	var passwords []string
	for run := range 2 {
		p := spawnDemoServe(t, env)
		select {
		case p.addr = <-p.listening:
		case err := <-p.done:
			t.Fatalf("demo --serve exited before it listened: %v\n%s", err, p.output())
		case <-time.After(2 * time.Minute): // a safety net, not a measure
			p.cmd.Process.Kill()
			t.Fatalf("demo --serve did not start:\n%s", p.output())
		}
		kept, err := os.ReadFile(filepath.Join(dir, "demo-password.txt"))
		if err != nil {
			t.Fatal(err)
		}
		password := strings.TrimSpace(string(kept))
		if !strings.Contains(p.output(), "密码 "+password) {
			t.Errorf("run %d does not print the kept password:\n%s", run+1, p.output())
		}
		passwords = append(passwords, password)
		form := url.Values{"username": {"demo"}, "password": {password}}
		req, _ := http.NewRequest("POST", "http://"+p.addr+"/admin/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
			t.Errorf("run %d: the demo account's login = %d, want 303 with a session", run+1, resp.StatusCode)
		}
		if code := p.stop(t); code != 0 {
			t.Errorf("run %d: exit %d after SIGTERM:\n%s", run+1, code, p.output())
		}
	}
	if passwords[0] != passwords[1] {
		t.Errorf("the second start changed the demo password (%q → %q)", passwords[0], passwords[1])
	}
}
