package fetch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

const (
	yingde    = "www.yingde.gov.test"
	qingcheng = "www.qingcheng.gov.test"
	lianzhou  = "www.lianzhou.gov.test"
	qingyuan  = "www.qingyuan.gov.test"
)

// TestRetryAfterIsObeyedExactly: after a 429 with Retry-After: 30 the next
// request reaches the site exactly 30 s later on the client's clock.
func TestRetryAfterIsObeyedExactly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault string
	}{{"429", sim.Fault429}, {"503", sim.Fault503}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			u := truthURL(t, e.w, yingde, "/")
			mustDo(t, e.c, Request{URL: u, Purpose: model.PurposeDetail})
			if err := e.w.SetFault(yingde, sim.Fault{Kind: tc.fault, RetryAfter: "30", Count: 1}); err != nil {
				t.Fatal(err)
			}
			if r := mustDo(t, e.c, Request{URL: u}); r.Status != atoi(tc.fault) {
				t.Fatalf("status %d, want %s", r.Status, tc.fault)
			}
			if r := mustDo(t, e.c, Request{URL: u}); r.Status != http.StatusOK {
				t.Fatalf("after the wait: status %d", r.Status)
			}
			paths, at := arrivals(e.w, yingde)
			n := len(at)
			if n != 4 || paths[0] != "/robots.txt" {
				t.Fatalf("sim saw %v", paths)
			}
			if gap := at[n-1].Sub(at[n-2]); gap != 30*time.Second {
				t.Errorf("the request after Retry-After: 30 came %v later, want exactly 30s", gap)
			}
		})
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestBackoffSeriesAndBreaker: a run of 503s is met with waits of exactly
// 4, 8, 16 and 32 s; the 5th error opens the breaker, which holds across a
// restart (a new client on the same store) and releases after 24 h.
func TestBackoffSeriesAndBreaker(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	u := truthURL(t, e.w, yingde, "/ydfgw/")
	mustDo(t, e.c, Request{URL: u})
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.Fault503, PathPrefix: "/ydfgw/"}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if r := mustDo(t, e.c, Request{URL: u}); r.Status != http.StatusServiceUnavailable {
			t.Fatalf("request %d: status %d, want 503", i+1, r.Status)
		}
	}
	_, err := e.c.Do(context.Background(), Request{URL: u})
	var be *BlockedError
	if !errors.As(err, &be) || be.Reason != "breaker open" || !IsHostStop(err) {
		t.Fatalf("6th request: %v, want an open breaker (a host stop)", err)
	}
	_, at := arrivals(e.w, yingde)
	if len(at) != 7 { // robots.txt, the good request, five 503s
		t.Fatalf("sim saw %d requests, want 7", len(at))
	}
	var gaps []time.Duration
	for i := 3; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	want := []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}
	if !equalDurations(gaps, want) {
		t.Errorf("waits between the 503s %v, want %v", gaps, want)
	}
	if !be.Until.Equal(at[6].Add(24 * time.Hour)) {
		t.Errorf("breaker until %v, want 24 h after the 5th error (%v)", be.Until, at[6])
	}

	t.Run("holds after a restart", func(t *testing.T) {
		restarted := e.client(t, ClientOptions{})
		_, err := restarted.Do(context.Background(), Request{URL: u})
		if !errors.As(err, &be) || be.Reason != "breaker open" {
			t.Fatalf("after restart: %v, want breaker open", err)
		}
		if _, at := arrivals(e.w, yingde); len(at) != 7 {
			t.Errorf("the restarted client reached the site (%d requests)", len(at))
		}
		rows := crawlLogRows(t, e.st, yingde)
		if rows[0].ErrorClass != ClassBreaker || rows[0].HTTPStatus != nil {
			t.Errorf("refusal row %+v, want class breaker and no status", rows[0])
		}
	})
	t.Run("releases after 24 h", func(t *testing.T) {
		e.w.ClearFaults(yingde)
		e.clock.Set(at[6].Add(24*time.Hour - time.Second))
		restarted := e.client(t, ClientOptions{})
		if _, err := restarted.Do(context.Background(), Request{URL: u}); !errors.As(err, &be) || be.Reason != "breaker open" {
			t.Fatalf("a second before 24 h: %v, want the breaker still open", err)
		}
		e.clock.Set(at[6].Add(24 * time.Hour))
		if r := mustDo(t, restarted, Request{URL: u}); r.Status != http.StatusOK {
			t.Errorf("after 24 h: status %d", r.Status)
		}
	})
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRobotsFailClosed: robots.txt answering 500 closes the host; the sim
// sees nothing but /robots.txt, and the refusal says what failed without
// pretending a rule of the site's decided it.
func TestRobotsFailClosed(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	if err := e.w.SetFault(lianzhou, sim.Fault{Kind: sim.FaultRobots500}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/tzgg/"} {
		_, err := e.c.Do(context.Background(), Request{URL: "http://" + lianzhou + p, Purpose: model.PurposeList})
		var re *RobotsError
		if !errors.As(err, &re) || !re.Unreachable || !IsHostStop(err) {
			t.Fatalf("GET %s: %v, want a fail-closed robots refusal (a host stop)", p, err)
		}
		if want := "HTTP 500 — robots.txt unreachable, not crawling this host (fail-closed)"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("message %q, want it to start %q", err, want)
		}
		if strings.Contains(err.Error(), "line") {
			t.Errorf("message %q cites a robots.txt line for something that is not a rule", err)
		}
	}
	if paths, _ := arrivals(e.w, lianzhou); strings.Join(paths, " ") != "/robots.txt" {
		t.Errorf("sim saw %v, want only /robots.txt", paths)
	}
	rows := crawlLogRows(t, e.st, lianzhou)
	if len(rows) != 3 {
		t.Fatalf("%d crawl_log rows, want 3 (robots.txt and two refusals)", len(rows))
	}
	robots := rows[len(rows)-1]
	if robots.Purpose != model.PurposeRobots || robots.HTTPStatus == nil || *robots.HTTPStatus != 500 {
		t.Errorf("robots row %+v", robots)
	}
	st, err := e.st.GetRobotsState(context.Background(), "http://"+lianzhou+":80")
	if err != nil || st.Status != 500 || st.Failures != 1 || st.LastError != "HTTP 500" || st.FailingSince == nil {
		t.Errorf("robots_state: %+v (%v), want status 500, 1 failure, error HTTP 500", st, err)
	}
}

// TestRobotsTightenedMidRun: a robots.txt tightened while zhizhi crawls is
// obeyed by the next request once the cached copy is revalidated (when it
// is 5 minutes old, or at once after ForgetRobots).
func TestRobotsTightenedMidRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(e *simEnv)
	}{
		{"after 5 minutes", func(e *simEnv) { e.clock.Advance(5 * time.Minute) }},
		{"ForgetRobots", func(e *simEnv) { e.c.ForgetRobots(qingcheng) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			u1 := truthURL(t, e.w, qingcheng, "/qcfgw/")
			mustDo(t, e.c, Request{URL: u1})
			mustDo(t, e.c, Request{URL: u1})
			if err := e.w.SetFault(qingcheng, sim.Fault{Kind: sim.FaultRobotsTighten, Path: "/qcfgw/"}); err != nil {
				t.Fatal(err)
			}
			tc.after(e)
			_, err := e.c.Do(context.Background(), Request{URL: u1})
			var re *RobotsError
			if !errors.As(err, &re) || re.Rule != "Disallow: /qcfgw/" || re.Line != 2 {
				t.Fatalf("after tightening: %v, want blocked by line 2 \"Disallow: /qcfgw/\"", err)
			}
			if want := `blocked by robots.txt line 2 "Disallow: /qcfgw/"`; err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
			paths, _ := arrivals(e.w, qingcheng)
			if got := strings.Join(paths[3:], " "); got != "/robots.txt" {
				t.Errorf("after tightening the sim saw %q, want only the robots.txt revalidation", got)
			}
		})
	}
}

// TestRobotsRevalidationIsConditional: a cached robots.txt is used as it is
// until it is 5 minutes old, then revalidated; unchanged, that costs a 304.
func TestRobotsRevalidationIsConditional(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	u := truthURL(t, e.w, qingcheng, "/")
	mustDo(t, e.c, Request{URL: u})
	_, at := arrivals(e.w, qingcheng)
	e.clock.Set(at[0].Add(5*time.Minute - time.Second))
	mustDo(t, e.c, Request{URL: u})
	if paths, _ := arrivals(e.w, qingcheng); len(paths) != 3 || paths[2] == "/robots.txt" {
		t.Fatalf("sim saw %v: robots.txt was asked again before it was 5 minutes old", paths)
	}
	e.clock.Set(at[0].Add(5 * time.Minute))
	mustDo(t, e.c, Request{URL: u})
	log := e.w.AccessLog(qingcheng)
	if len(log) != 5 || log[3].Path != "/robots.txt" || log[3].Status != http.StatusNotModified {
		t.Errorf("sim log %+v, want robots.txt revalidated at 5 minutes, answered 304", log)
	}
}

// TestRedirectToForbiddenAddresses: a redirect to loopback or the metadata
// address is refused with the reason, and nothing but the sim is dialled.
func TestRedirectToForbiddenAddresses(t *testing.T) {
	for _, tc := range []struct {
		name, location, reason string
	}{
		{"loopback discard port", "http://127.0.0.1:9/x", "port 9 is not allowed"},
		{"loopback", "http://127.0.0.1/x", "loopback address"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "metadata address"},
		{"metadata decimal", "http://2852039166/latest/", "metadata address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultRedirect, PathPrefix: "/go", Location: tc.location}); err != nil {
				t.Fatal(err)
			}
			_, err := e.c.Do(context.Background(), Request{URL: "http://" + yingde + "/go"})
			var rf *RefusedError
			if !errors.As(err, &rf) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("redirect to %s: %v, want refused: %s", tc.location, err, tc.reason)
			}
			rows := crawlLogRows(t, e.st, "")
			if rows[0].ErrorClass != ClassSSRF || rows[0].HTTPStatus != nil || rows[0].ArticleURL != tc.location {
				t.Errorf("refused hop row %+v", rows[0])
			}
		})
	}
}

// TestCaptchaIsAStop: a CAPTCHA page ends the visit with ErrCaptcha.
func TestCaptchaIsAStop(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultCaptcha, PathPrefix: "/ydfgw/"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Do(context.Background(), Request{URL: truthURL(t, e.w, yingde, "/ydfgw/")})
	if !errors.Is(err, ErrCaptcha) || !IsHostStop(err) {
		t.Fatalf("captcha page: %v, want ErrCaptcha", err)
	}
	if rows := crawlLogRows(t, e.st, yingde); rows[0].ErrorClass != ClassCaptcha {
		t.Errorf("row %+v, want class captcha", rows[0])
	}
}

// TestConditionalGetAndURLState: the second conditional GET is a 304
// without a body; url_state keeps the validators, the content hash and a
// next check within [1 h, 30 d].
func TestConditionalGetAndURLState(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	u := truthURL(t, e.w, qingcheng, "/")
	first := mustDo(t, e.c, Request{URL: u, Conditional: true})
	if first.Status != 200 || len(first.Body) == 0 {
		t.Fatalf("first: %d, %d bytes", first.Status, len(first.Body))
	}
	second := mustDo(t, e.c, Request{URL: u, Conditional: true})
	if !second.NotModified || len(second.Body) != 0 || second.WireBytes != 0 {
		t.Errorf("second: status %d, %d body bytes, %d on the wire; want a bodiless 304", second.Status, len(second.Body), second.WireBytes)
	}
	st, err := e.st.GetURLState(context.Background(), store.URLHash(u))
	if err != nil {
		t.Fatal(err)
	}
	if st.ETag == "" || len(st.ContentHash) != 64 || st.LastChangedAt == nil || st.NextCheckAt == nil {
		t.Fatalf("url_state %+v", st)
	}
	if d := st.NextCheckAt.Sub(*st.LastCheckedAt); d < MinRecheck || d > MaxRecheck {
		t.Errorf("next check in %v", d)
	}
	// The 304 records the bytes it saved: the size of the last full body.
	if st.ContentLength != int64(len(first.Body)) {
		t.Errorf("url_state content_length %d, want %d", st.ContentLength, len(first.Body))
	}
	logs, err := e.st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: qingcheng, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].HTTPStatus == nil || *logs[0].HTTPStatus != http.StatusNotModified || logs[0].BytesSaved != int64(len(first.Body)) {
		t.Errorf("crawl_log of the 304: %+v; want bytes_saved %d", logs, len(first.Body))
	}
	if log := e.w.AccessLog(qingcheng); log[len(log)-1].Status != http.StatusNotModified {
		t.Errorf("the sim answered %d to the conditional request", log[len(log)-1].Status)
	}
}

func TestNextCheckIn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		intervals []int64
		since     time.Duration
		want      time.Duration
	}{
		{"mean of intervals", []int64{3600 * 10, 3600 * 30}, 0, 30 * time.Hour},
		{"clamped up", []int64{60}, 0, time.Hour},
		{"clamped down", []int64{90 * 86400}, 0, 30 * 24 * time.Hour},
		{"no change yet: age stands in", nil, 4 * time.Hour, 6 * time.Hour},
		{"brand new", nil, 0, time.Hour},
	} {
		if got := NextCheckIn(tc.intervals, tc.since); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestHeadProbeAndHeadRead: HEAD transfers no body; a summary head read
// stops quietly at MaxBytes.
func TestHeadProbeAndHeadRead(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	u := truthURL(t, e.w, qingcheng, "/")
	head := mustDo(t, e.c, Request{URL: u, Method: "HEAD", Purpose: model.PurposeProbe})
	if head.Status != 200 || len(head.Body) != 0 {
		t.Errorf("HEAD: %d with %d bytes", head.Status, len(head.Body))
	}
	part := mustDo(t, e.c, Request{URL: u, Head: true, MaxBytes: 1000})
	if !part.Truncated || len(part.Body) != 1000 {
		t.Errorf("head read: truncated %v, %d bytes; want 1000", part.Truncated, len(part.Body))
	}
	if log := e.w.AccessLog(qingcheng); log[1].Method != "HEAD" {
		t.Errorf("sim saw %s for the probe", log[1].Method)
	}
}

// TestBrowserHostWithoutBrowser: a host that needs the browser fails with
// a clear error when there is none, and the refusal is logged.
func TestBrowserHostWithoutBrowser(t *testing.T) {
	for _, tc := range []struct {
		name string
		pol  SitePolicy
	}{
		{"strategy playwright", SitePolicy{RespectRobots: true, Strategy: "playwright"}},
		{"412 escalates", SitePolicy{RespectRobots: true, EscalateStatus: []int{412}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			e.c.SetSitePolicy(qingyuan, tc.pol)
			_, err := e.c.Do(context.Background(), Request{URL: "http://" + qingyuan + "/qyfgw/gkmlpt/index"})
			if !errors.Is(err, ErrNoBrowser) || !strings.Contains(err.Error(), "chromium") {
				t.Fatalf("%v, want ErrNoBrowser naming chromium", err)
			}
			rows := crawlLogRows(t, e.st, qingyuan)
			if rows[0].ErrorClass != ClassNoBrowser || rows[0].Strategy != TierBrowser {
				t.Errorf("row %+v", rows[0])
			}
		})
	}
}

// TestRobotsOffOnlyForOwnedHosts: respect_robots false is honoured on an
// owned host only.
func TestRobotsOffOnlyForOwnedHosts(t *testing.T) {
	const gd = "www.gd.gov.test"
	disallowed := "http://" + gd + "/zwgk/rsrm/"
	for _, tc := range []struct {
		name    string
		pol     SitePolicy
		blocked bool
	}{
		{"not owned", SitePolicy{RespectRobots: false}, true},
		{"owned", SitePolicy{RespectRobots: false, Owned: true}, false},
		{"owned but respecting", SitePolicy{RespectRobots: true, Owned: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			e.c.SetSitePolicy(gd, tc.pol)
			_, err := e.c.Do(context.Background(), Request{URL: disallowed})
			if IsRobotsDisallowed(err) != tc.blocked {
				t.Errorf("err %v, blocked want %v", err, tc.blocked)
			}
		})
	}
}
