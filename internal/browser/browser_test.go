package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every Chromium launch costs seconds on a small machine, so the tests share
// one Browser (and one test site); only the process-leak test starts its own.
var shared struct {
	once sync.Once
	b    *Browser
	site *testSite
	err  error

	mu        sync.Mutex
	allowed   []string             // every URL the Allow callback was asked about
	allowedAt map[string]time.Time // when it was last asked about each
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		dir := shared.b.dir
		shared.b.Close()
		if n := countChromium(dir); n > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d chromium processes left after Close\n", n)
			code = 1
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "FAIL: profile dir %s left after Close\n", dir)
			code = 1
		}
	}
	if shared.site != nil {
		shared.site.srv.Close()
	}
	os.Exit(code)
}

// needChromium skips when Chromium is missing, except in CI where the
// browser tier must be tested.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(DefaultExecPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is required in CI: %v", err)
		}
		t.Skipf("chromium not installed (%v); apt-get install chromium", err)
	}
}

// testAllow is the test's stand-in for the fetcher's guard: it records what
// it was asked and allows only the test hosts — and, on purpose, an unmapped
// name and a loopback IP literal, to show that Chromium's resolver refuses
// them anyway when the callback is wrong.
func testAllow(_ context.Context, u *url.URL) error {
	shared.mu.Lock()
	shared.allowed = append(shared.allowed, u.String())
	if shared.allowedAt == nil {
		shared.allowedAt = map[string]time.Time{}
	}
	shared.allowedAt[u.String()] = time.Now()
	shared.mu.Unlock()
	switch u.Hostname() {
	case challengeHost, secondHost, unmappedHost, "127.0.0.1":
		return nil
	}
	return fmt.Errorf("refused: %s is not allowed by the test policy", u.Hostname())
}

func askedAllow(rawURL string) bool {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, a := range shared.allowed {
		if a == rawURL {
			return true
		}
	}
	return false
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func sharedBrowser(t *testing.T) (*Browser, *testSite) {
	t.Helper()
	needChromium(t)
	shared.once.Do(func() {
		shared.site = newTestSite()
		addr := shared.site.addr()
		shared.b, shared.err = New(context.Background(), Options{
			UAToken: testUAToken,
			Resolve: map[string]string{challengeHost: addr, secondHost: addr, deniedHost: addr},
			Allow:   testAllow,
			Timeout: 45 * time.Second,
			Logger:  testLogger(),
		})
	})
	if shared.err != nil {
		t.Fatalf("start shared browser: %v", shared.err)
	}
	return shared.b, shared.site
}

// countChromium counts live processes whose command line mentions dir. It
// scans /proc on its own, independently of the code under test.
func countChromium(dir string) int {
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), dir) {
			n++
		}
	}
	return n
}

func TestRenderPassesCookieChallenge(t *testing.T) {
	b, site := sharedBrowser(t)
	site.reset()
	pageURL := "http://" + challengeHost + "/page"

	p, err := b.Render(t.Context(), pageURL, RenderOptions{WaitChallenge: true, MaxWait: 20 * time.Second})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if p.Status != http.StatusOK {
		t.Errorf("Status = %d, want 200", p.Status)
	}
	if p.URL != pageURL {
		t.Errorf("URL = %q, want %q", p.URL, pageURL)
	}
	if !p.Challenged {
		t.Error("Challenged = false, want true (the first answer was 412)")
	}
	if !strings.Contains(p.HTML, contentMarker) {
		t.Errorf("HTML lacks %q:\n%s", contentMarker, p.HTML)
	}
	if !strings.Contains(p.HTML, "列表已加载") {
		t.Errorf("HTML lacks the XHR-loaded list (render returned before the network settled):\n%s", p.HTML)
	}

	var cookie string
	for _, c := range p.Cookies {
		if c.Name == clearance {
			cookie = c.Value
			if c.Source != "browser" || c.Host != challengeHost || c.Path != "/" {
				t.Errorf("cookie = %+v, want source browser, host %s, path /", c, challengeHost)
			}
			if c.ExpiresAt == nil || c.ExpiresAt.Before(time.Now().Add(50*time.Minute)) {
				t.Errorf("cookie expiry = %v, want about an hour ahead (max-age=3600)", c.ExpiresAt)
			}
		}
	}
	if !validClearance(cookie) {
		t.Fatalf("harvested %s = %q is not a valid answer; cookies: %+v", clearance, cookie, p.Cookies)
	}

	t.Run("site saw the challenge, the reload and our honest UA", func(t *testing.T) {
		var pageHits []hit
		for _, h := range site.hitsFor(challengeHost) {
			if !strings.HasSuffix(h.UA, " "+testUAToken) {
				t.Errorf("UA seen by the server for %s = %q, want it to end with %q", h.Path, h.UA, testUAToken)
			}
			if !strings.Contains(h.UA, "Chrome/") {
				t.Errorf("UA %q lost Chromium's own product token", h.UA)
			}
			if h.Path == "/page" {
				pageHits = append(pageHits, h)
			}
		}
		if len(pageHits) != 2 || pageHits[0].Status != 412 || pageHits[1].Status != 200 {
			t.Errorf("server saw /page as %+v, want one 412 then one 200", pageHits)
		}
	})

	t.Run("requests record every hit the server saw", func(t *testing.T) {
		var docs []RequestRecord
		got := map[string]int{}
		for _, r := range p.Requests {
			if r.URL == pageURL {
				docs = append(docs, r)
			}
			if r.BlockedReason == "" && r.Status != 0 {
				u, _ := url.Parse(r.URL)
				got[u.Path+" "+fmt.Sprint(r.Status)]++
			}
		}
		if len(docs) != 2 || docs[0].Status != 412 || docs[1].Status != 200 {
			t.Fatalf("records of /page = %+v, want a 412 then a 200", docs)
		}
		for _, d := range docs {
			if d.Method != "GET" || d.Bytes <= 0 || d.ResourceType != "Document" || d.StartedAt.IsZero() {
				t.Errorf("document record incomplete: %+v", d)
			}
		}
		want := map[string]int{}
		for _, h := range site.hitsFor(challengeHost) {
			want[h.Path+" "+fmt.Sprint(h.Status)]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("records %v differ from the server's log %v", got, want)
		}
	})

	t.Run("a plain HTTP client passes with the harvested cookie", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			cookie string
			want   int
		}{
			{"harvested cookie", cookie, http.StatusOK},
			{"no cookie", "", http.StatusPreconditionFailed},
			{"forged cookie", "n1.12345", http.StatusPreconditionFailed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, _ := http.NewRequestWithContext(t.Context(), "GET", site.srv.URL+"/page", nil)
				req.Host = challengeHost
				if tc.cookie != "" {
					req.AddCookie(&http.Cookie{Name: clearance, Value: tc.cookie})
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
				}
				if tc.want == http.StatusOK && !strings.Contains(string(body), contentMarker) {
					t.Errorf("body lacks %q", contentMarker)
				}
			})
		}
	})

	t.Run("a fresh render is a fresh visitor", func(t *testing.T) {
		site.reset()
		p, err := b.Render(t.Context(), pageURL, RenderOptions{WaitChallenge: false})
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		// The cookie of the first render must not leak into this one: the
		// site challenges again, and the page's own script passes it.
		if !p.Challenged {
			t.Error("Challenged = false: the second render reused the first one's cookie")
		}
		if hits := site.hitsFor(challengeHost); len(hits) == 0 || hits[0].Status != http.StatusPreconditionFailed || hits[0].Cookie != "" {
			t.Errorf("server saw %+v, want a cookieless first request answered 412", hits)
		}
	})
}

func TestRenderStops(t *testing.T) {
	b, _ := sharedBrowser(t)
	for _, tc := range []struct {
		name    string
		path    string
		opts    RenderOptions
		wantErr error
	}{
		{"captcha wall is a stop", "/captcha", RenderOptions{WaitChallenge: true}, ErrCaptcha},
		{"long article mentioning 验证码 is no wall", "/article", RenderOptions{WaitChallenge: true}, nil},
		{"challenge marker never clears", "/article", RenderOptions{
			WaitChallenge: true, MaxWait: time.Second, ChallengeMarkers: []string{"年度重点项目"},
		}, ErrChallengeNotCleared},
		{"custom captcha marker", "/article", RenderOptions{CaptchaMarkers: []string{"通知正文"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := b.Render(t.Context(), "http://"+challengeHost+tc.path, tc.opts)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if p == nil || len(p.Requests) == 0 {
				t.Fatalf("page = %+v, want the requests made before the stop", p)
			}
		})
	}
}

func TestRenderGate(t *testing.T) {
	b, site := sharedBrowser(t)
	site.reset()
	p, err := b.Render(t.Context(), "http://"+challengeHost+"/ssrf", RenderOptions{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if !strings.Contains(p.HTML, "settled:") {
		t.Errorf("page script did not finish before Render returned:\n%s", p.HTML)
	}
	byURL := map[string]RequestRecord{}
	for _, r := range p.Requests {
		byURL[r.URL] = r
	}
	for _, tc := range []struct {
		name      string
		url       string
		askAllow  bool   // the Allow callback must have been the gate
		reasonHas string // in BlockedReason; "" means not refused by us
		errorHas  string // in Chromium's error
	}{
		{"fetch to a private address", "http://10.0.0.1/x", true, "not allowed by the test policy", "BLOCKED_BY_CLIENT"},
		{"fetch to the metadata address", "http://169.254.169.254/latest/meta-data/", true, "not allowed by the test policy", "BLOCKED_BY_CLIENT"},
		{"fetch to a pinned but refused host", "http://" + deniedHost + "/api", true, "not allowed by the test policy", "BLOCKED_BY_CLIENT"},
		{"iframe on a refused host", "http://" + deniedHost + "/frame", true, "not allowed by the test policy", ""},
		{"script on a refused host", "http://" + deniedHost + "/evil.js", true, "not allowed by the test policy", ""},
		{"image to a private address", "http://10.0.0.1/x.png", false, "resource type Image", ""},
		{"image on a refused host", "http://" + deniedHost + "/pixel.png", false, "resource type Image", ""},
		{"allowed name Chromium must not resolve", "http://" + unmappedHost + "/api", true, "", "NAME_NOT_RESOLVED"},
		{"allowed IP literal Chromium must not dial", "http://" + site.addr() + "/api/list", true, "", "NAME_NOT_RESOLVED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := byURL[tc.url]
			if !ok {
				t.Fatalf("no record for %s in %+v", tc.url, p.Requests)
			}
			if got := askedAllow(tc.url); got != tc.askAllow {
				t.Errorf("Allow asked about %s: %v, want %v", tc.url, got, tc.askAllow)
			}
			if tc.reasonHas == "" && r.BlockedReason != "" || !strings.Contains(r.BlockedReason, tc.reasonHas) {
				t.Errorf("BlockedReason = %q, want it to contain %q", r.BlockedReason, tc.reasonHas)
			}
			if !strings.Contains(r.Error, tc.errorHas) {
				t.Errorf("Error = %q, want it to contain %q", r.Error, tc.errorHas)
			}
			if r.Status != 0 || r.Bytes != 0 {
				t.Errorf("refused request got a response: status %d, %d bytes", r.Status, r.Bytes)
			}
		})
	}
	for _, host := range []string{deniedHost, "127.0.0.1"} {
		if hits := site.hitsFor(host); len(hits) != 0 {
			t.Errorf("%s was reached %d times: %+v", host, len(hits), hits)
		}
	}
	if r := byURL["http://"+challengeHost+"/api/list"]; r.Status != 200 || r.BlockedReason != "" {
		t.Errorf("same-site fetch = %+v, want allowed with status 200", r)
	}

	t.Run("refused main document", func(t *testing.T) {
		p, err := b.Render(t.Context(), "http://"+deniedHost+"/page", RenderOptions{})
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "not allowed by the test policy") {
			t.Fatalf("err = %v, want ErrBlocked with the policy's reason", err)
		}
		if p == nil || len(p.Requests) != 1 || p.Requests[0].BlockedReason == "" {
			t.Errorf("page = %+v, want one refused request recorded", p)
		}
		if hits := site.hitsFor(deniedHost); len(hits) != 0 {
			t.Errorf("refused host was reached: %+v", hits)
		}
	})
}

func TestNoChromiumLeftBehind(t *testing.T) {
	needChromium(t)
	site := newTestSite()
	t.Cleanup(site.srv.Close)
	for _, tc := range []struct {
		name string
		stop func(b *Browser, cancel context.CancelFunc)
	}{
		{"Close", func(b *Browser, _ context.CancelFunc) { b.Close() }},
		{"parent context cancelled", func(b *Browser, cancel context.CancelFunc) {
			cancel()
			select {
			case <-b.Done():
			case <-time.After(30 * time.Second):
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b, err := New(ctx, Options{
				UAToken: testUAToken,
				Resolve: map[string]string{challengeHost: site.addr()},
				Logger:  testLogger(),
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer b.Close()
			if _, err := b.Render(t.Context(), "http://"+challengeHost+"/article", RenderOptions{}); err != nil {
				t.Fatalf("Render: %v", err)
			}
			if n := countChromium(b.dir); n == 0 {
				t.Fatalf("found no chromium process for %s while running: the count below proves nothing", b.dir)
			}
			tc.stop(b, cancel)
			if n := countChromium(b.dir); n != 0 {
				t.Errorf("%d chromium processes left", n)
			}
			if _, err := os.Stat(b.dir); !os.IsNotExist(err) {
				t.Errorf("profile dir %s left behind (err %v)", b.dir, err)
			}
			if _, err := b.Render(t.Context(), "http://"+challengeHost+"/article", RenderOptions{}); !errors.Is(err, ErrClosed) {
				t.Errorf("Render after stop: err = %v, want ErrClosed", err)
			}
		})
	}
}

func TestRenderConcurrency(t *testing.T) {
	b, site := sharedBrowser(t)

	t.Run("a page's parallel requests reach a host one at a time", func(t *testing.T) {
		site.reset()
		p, err := b.Render(t.Context(), "http://"+challengeHost+"/parallel", RenderOptions{})
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		if !strings.Contains(p.HTML, "done:200,200,200") {
			t.Errorf("page's fetches did not all succeed:\n%s", p.HTML)
		}
		if perHost, _ := site.maxInFlight(challengeHost); perHost != 1 {
			t.Errorf("server saw %d requests in flight at once, want 1", perHost)
		}
		slow := 0
		for _, r := range p.Requests {
			if strings.Contains(r.URL, "/slow?") && r.Status == 200 {
				slow++
			}
		}
		if slow != 3 {
			t.Errorf("recorded %d of the 3 /slow requests: %+v", slow, p.Requests)
		}
		// The Allow callback spends the host's token; it must run only
		// once the host's previous request is over, or the token would
		// date a request that still waits, and the site would see requests
		// closer together than the bucket allows.
		hits := site.hitsFor(challengeHost)
		shared.mu.Lock()
		defer shared.mu.Unlock()
		for k := 1; k < len(hits); k++ {
			u := "http://" + challengeHost + hits[k].Path
			if hits[k].Query != "" {
				u += "?" + hits[k].Query
			}
			at, ok := shared.allowedAt[u]
			if !ok {
				t.Errorf("%s reached the site without Allow", u)
				continue
			}
			if at.Before(hits[k-1].Finished) {
				t.Errorf("%s was allowed (its token spent) %v before the previous request %s?%s was over",
					u, hits[k-1].Finished.Sub(at), hits[k-1].Path, hits[k-1].Query)
			}
		}
	})

	t.Run("renders wait for a free tab", func(t *testing.T) {
		site.reset()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, host := range []string{challengeHost, secondHost} {
			wg.Go(func() {
				_, errs[i] = b.Render(t.Context(), "http://"+host+"/parallel", RenderOptions{})
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
		}
		// Two hosts need no host slot between them: only the tab limit
		// (MaxTabs 1) keeps the two pages from overlapping at the server.
		if _, total := site.maxInFlight(""); total != 1 {
			t.Errorf("server saw %d requests in flight across hosts, want 1 with one tab", total)
		}
	})
}
