package browser

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fake host names of the test web. They reach the loopback test server only
// through the browser's resolve map, which is what proves the pinning.
const (
	challengeHost = "www.test-challenge.gov.test"
	secondHost    = "www.second.gov.test"   // pinned and allowed, for concurrency checks
	deniedHost    = "www.denied.gov.test"   // pinned, but refused by the test's Allow
	unmappedHost  = "www.unmapped.gov.test" // not pinned: Chromium must not resolve it
	clearance     = "zz_clearance"
	contentMarker = "ZZ-CONTENT-OK"
	testUAToken   = "zhizhi/0.0.0-test (+http://zhizhi.example.gov.test/contact)"
)

// hit is one request as the server saw it: the site's side of the story.
type hit struct {
	Host, Path, UA, Cookie string
	Query                  string
	Status                 int
	Finished               time.Time // when the handler returned
}

// testSite imitates a portal behind a cookie challenge: without a valid
// zz_clearance cookie /page answers 412 with a script that computes a value
// over a nonce, stores it in the cookie and reloads.
type testSite struct {
	srv   *httptest.Server
	nonce atomic.Int64

	mu   sync.Mutex
	hits []hit

	// Requests in flight per host and overall, and the maxima seen.
	inflight   map[string]int
	total      int
	maxPerHost map[string]int
	maxTotal   int
}

func newTestSite() *testSite {
	s := &testSite{inflight: map[string]int{}, maxPerHost: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// addr is the server's loopback address, the value of every resolve entry.
func (s *testSite) addr() string { return s.srv.Listener.Addr().String() }

func (s *testSite) hitsFor(host string) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hit
	for _, h := range s.hits {
		if h.Host == host {
			out = append(out, h)
		}
	}
	return out
}

func (s *testSite) reset() {
	s.mu.Lock()
	s.hits = nil
	s.maxPerHost = map[string]int{}
	s.maxTotal = 0
	s.mu.Unlock()
}

// maxInFlight returns the most requests the server had in flight at host
// at once, and overall.
func (s *testSite) maxInFlight(host string) (perHost, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxPerHost[host], s.maxTotal
}

// challengeAnswer is what the page's script computes for a nonce; the
// server checks the cookie with the same function.
func challengeAnswer(nonce string) int64 {
	var h int64
	for _, c := range []byte(nonce) {
		h = (h*31 + int64(c)) % 1000000007
	}
	return h
}

func validClearance(v string) bool {
	nonce, answer, ok := strings.Cut(v, ".")
	if !ok || !strings.HasPrefix(nonce, "n") {
		return false
	}
	n, err := strconv.ParseInt(answer, 10, 64)
	return err == nil && n == challengeAnswer(nonce)
}

func (s *testSite) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	s.mu.Lock()
	s.inflight[host]++
	s.total++
	s.maxPerHost[host] = max(s.maxPerHost[host], s.inflight[host])
	s.maxTotal = max(s.maxTotal, s.total)
	s.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.route(rec, r, host)
	s.mu.Lock()
	s.inflight[host]--
	s.total--
	s.hits = append(s.hits, hit{Host: host, Path: r.URL.Path, Query: r.URL.RawQuery, UA: r.UserAgent(),
		Cookie: r.Header.Get("Cookie"), Status: rec.status, Finished: time.Now()})
	s.mu.Unlock()
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *testSite) route(w http.ResponseWriter, r *http.Request, host string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if host != challengeHost && host != secondHost {
		// Whatever reaches another host is a leak the tests look for.
		fmt.Fprint(w, "leaked")
		return
	}
	switch r.URL.Path {
	case "/page":
		c, err := r.Cookie(clearance)
		if err != nil || !validClearance(c.Value) {
			nonce := "n" + strconv.FormatInt(s.nonce.Add(1), 10)
			w.WriteHeader(http.StatusPreconditionFailed)
			fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>zz-challenge</title></head><body>
<script>
(function () {
	var n = %q, h = 0;
	for (var i = 0; i < n.length; i++) { h = (h * 31 + n.charCodeAt(i)) %% 1000000007; }
	document.cookie = "%s=" + n + "." + h + "; path=/; max-age=3600";
	location.reload();
})();
</script></body></html>`, nonce, clearance)
			return
		}
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>清远测试页</title></head><body>
<p id="marker">%s</p><div id="list"></div>
<script src="/app.js"></script></body></html>`, contentMarker)
	case "/app.js":
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `fetch("/api/list").then(r => r.json()).then(j => {
	document.getElementById("list").textContent = j.items.join(",");
});`)
	case "/api/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items":["列表已加载","第二条"]}`)
	case "/slow":
		// Long enough that requests sent in parallel would overlap here.
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	case "/parallel":
		fmt.Fprint(w, `<!DOCTYPE html><html><head><title>parallel</title></head><body><p id="status">pending</p>
<script>
Promise.all([fetch("/slow?a"), fetch("/slow?b"), fetch("/slow?c")]).then(rs => {
	document.getElementById("status").textContent = "done:" + rs.map(r => r.status).join(",");
});
</script></body></html>`)
	case "/captcha":
		fmt.Fprint(w, `<!DOCTYPE html><html><head><title>安全验证</title></head><body>
<p>请拖动下方滑块完成验证码校验</p><div class="slider-track"><span class="slider"></span></div></body></html>`)
	case "/article":
		// A long real page that mentions 验证码 in its comment form is no wall.
		body := strings.Repeat("<p>清远市发展和改革局关于印发年度重点项目计划的通知正文段落。</p>\n", 80)
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>通知</title></head><body>%s
<form><label>验证码</label><input name="code"></form></body></html>`, body)
	case "/ssrf":
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>ssrf</title></head><body>
<img src="http://10.0.0.1/x.png">
<img src="http://%[1]s/pixel.png">
<iframe src="http://%[1]s/frame"></iframe>
<script src="http://%[1]s/evil.js"></script>
<p id="status">pending</p>
<script>
Promise.allSettled([
	fetch("http://10.0.0.1/x"),
	fetch("http://169.254.169.254/latest/meta-data/"),
	fetch("http://%[1]s/api"),
	fetch("http://%[2]s/api"),
	fetch("http://%[3]s/api/list"),
	fetch("/api/list"),
]).then(rs => {
	document.getElementById("status").textContent = "settled:" + rs.map(r => r.status).join(",");
});
</script></body></html>`, deniedHost, unmappedHost, s.addr())
	default:
		http.NotFound(w, r)
	}
}
