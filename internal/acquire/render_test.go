package acquire

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/browser"
	"zhizhi/internal/fetch"
	"zhizhi/internal/fetch/ssrftest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store/storetest"
)

// jsHost is a site whose article only a browser sees: the page is a
// shell, and its script fetches the text and writes it in.
const (
	jsHost  = "www.js.gov.test"
	jsHost2 = "www2.js.gov.test" // the same server under a second name
	jsTitle = "关于开展二〇二六年度政务公开评估的通知"
	jsText  = "各县（市、区）人民政府：为提升政务公开质量，现就年度评估有关事项通知如下。评估范围为本市各级行政机关，评估内容包括主动公开、依申请公开和政策解读。"
)

const jsShell = `<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>政务公开</title></head>
<body><div id="app"><p class="loading">正在加载……</p></div>
<script>
fetch("/api/article.json").then(function (r) { return r.json(); }).then(function (d) {
  var app = document.getElementById("app");
  app.innerHTML = "";
  var h = document.createElement("h1"); h.textContent = d.title; app.appendChild(h);
  var p = document.createElement("p"); p.textContent = d.text; app.appendChild(p);
  document.title = d.title;
});
</script></body></html>`

// jsSite serves jsHost; /hang.html answers only once release is closed.
type jsSite struct {
	*countingSite
	release chan struct{}
}

func newJSSite(t testing.TB) *jsSite {
	t.Helper()
	s := &jsSite{release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", disallowPrivate)
	mux.HandleFunc("/news.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, jsShell)
	})
	mux.HandleFunc("/api/article.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"title": %q, "text": %q}`, jsTitle, jsText)
	})
	mux.HandleFunc("/hang.html", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, jsShell)
	})
	mux.HandleFunc("/ssrf.html", func(w http.ResponseWriter, r *http.Request) {
		// A page whose scripts and XHRs point at every refused address.
		var b strings.Builder
		b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>外链</title>`)
		for _, c := range ssrftest.Cases {
			fmt.Fprintf(&b, "<script src=%q></script>\n", c.URL)
		}
		b.WriteString("</head><body><p>本页引用了外部资源。</p><script>\n")
		for _, c := range ssrftest.Cases {
			fmt.Fprintf(&b, "fetch(%q).catch(function () {});\n", c.URL)
		}
		b.WriteString("</script></body></html>")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, b.String())
	})
	s.countingSite = serveCounted(t, mux)
	// Registered after the server's close, so run before it: a page held
	// until release answers before the server goes.
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	return s
}

// needChromium skips without Chromium, except under CI=true, where it
// fails: a green CI run has rendered.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is required under CI=true: %v", err)
		}
		t.Skipf("chromium not installed (%v); apt-get install chromium", err)
	}
}

// withBrowser gives the client Debian's Chromium and the API its render
// tier (tier may be nil for the defaults), and puts js on the map.
func withBrowser(js *jsSite, tier *RenderTier) envOption {
	return func(o *fetch.ClientOptions, d *Deps) {
		o.Browser = fetch.Chromium("", quiet())
		if js != nil {
			o.Resolve[jsHost] = js.addr
			o.Resolve[jsHost2] = js.addr
		}
		if tier == nil {
			tier = &RenderTier{}
		}
		d.Render = tier
	}
}

// rendered fails the test unless a render of body succeeded.
func (e *env) rendered(t *testing.T, body map[string]any) *Document {
	t.Helper()
	a := e.post(t, "/v1/render", body)
	if a.status != http.StatusOK || !a.Success || a.Data == nil {
		t.Fatalf("render %v: %d %.600s", body, a.status, a.raw)
	}
	fresh := a.Data.Metadata.CacheState == "miss"
	if a.Data.Acquisition.Provider != providerBrowser || fresh != (a.Data.Acquisition.Evidence.BrowserSeconds != nil) {
		t.Errorf("render %v: provider %q, browser_seconds %v", body, a.Data.Acquisition.Provider,
			a.Data.Acquisition.Evidence.BrowserSeconds)
	}
	return a.Data
}

// TestRenderJSPage: a page whose text its script fetches and writes in is
// answered with that text by /v1/render, where /v1/fetch sees the empty
// shell; the evidence lists the page's XHR.
func TestRenderJSPage(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	e := newEnv(t, storetest.SQLite(t), withBrowser(js, nil))
	u := "http://" + jsHost + "/news.html"

	plain := e.ok(t, map[string]any{"url": u, "formats": []string{"markdown", "rawHtml"}})
	if strings.Contains(*plain.RawHTML, jsText) {
		t.Fatalf("the direct fetch already has the text: the page is not one only a browser sees")
	}
	d := e.rendered(t, map[string]any{"url": u, "formats": []string{"markdown", "rawHtml", "links"}})
	if !strings.Contains(*d.Markdown, jsText) {
		t.Errorf("the rendered markdown lacks the article the script wrote:\n%s", *d.Markdown)
	}
	if strings.Contains(*d.Markdown, "正在加载") {
		t.Errorf("the rendered markdown still has the loading placeholder:\n%s", *d.Markdown)
	}
	if d.Metadata.Title != jsTitle || d.Metadata.StatusCode != 200 || d.Metadata.URL != u {
		t.Errorf("metadata %+v", d.Metadata)
	}
	ev := d.Acquisition.Evidence
	var sawXHR bool
	for _, s := range ev.Subrequests {
		if strings.HasSuffix(s.URL, "/api/article.json") && s.Status == 200 && s.Refused == "" {
			sawXHR = true
		}
	}
	if !sawXHR || ev.SubrequestsTotal != len(ev.Subrequests) || ev.Attempts < 2 {
		t.Errorf("evidence: attempts %d, subrequests %+v (total %d); want the page and its XHR", ev.Attempts, ev.Subrequests, ev.SubrequestsTotal)
	}
	if *ev.BrowserSeconds <= 0 || ev.Tier != fetch.TierBrowser {
		t.Errorf("evidence: browser_seconds %v, tier %q", *ev.BrowserSeconds, ev.Tier)
	}
	if js.count("/api/article.json") != 1 {
		t.Errorf("the site answered the XHR %d times, want 1", js.count("/api/article.json"))
	}
	// The rendered page is kept: its raw reference opens the HTML the
	// answer was made from.
	snap, body, err := e.st.FetchSnapshot(t.Context(), u)
	if err != nil || snap.Tier != fetch.TierBrowser || snap.RawSHA256 != d.Acquisition.Raw.SHA256 || !strings.Contains(string(body), jsText) {
		t.Errorf("snapshot %+v (%v): not the rendered page", snap, err)
	}
	// maxAge answers from that snapshot, with nothing sent to the site.
	pages := js.count("/news.html")
	again := e.rendered(t, map[string]any{"url": u, "maxAge": 3600000})
	if again.Metadata.CacheState != "hit" || !strings.Contains(*again.Markdown, jsText) || js.count("/news.html") != pages {
		t.Errorf("maxAge: cacheState %q, %d more requests", again.Metadata.CacheState, js.count("/news.html")-pages)
	}
}

// TestRenderTimeLimit: a render ends at the tier's browser seconds even
// when the request allows more, and gives its slot back.
func TestRenderTimeLimit(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	tier := &RenderTier{BrowserSeconds: 2 * time.Second}
	e := newEnv(t, storetest.SQLite(t), withBrowser(js, tier))
	a := e.post(t, "/v1/render", map[string]any{"url": "http://" + jsHost + "/hang.html", "timeout": 100000})
	if a.status != http.StatusRequestTimeout || a.Code != CodeTimeout || !strings.Contains(a.Error, "2s") {
		t.Errorf("%d %s; want 408 SCRAPE_TIMEOUT after the tier's 2 s", a.status, a.raw)
	}
	if n := len(tier.slots); n != 0 {
		t.Errorf("%d slots still taken after the render ended", n)
	}
}

// TestRenderPassesCityPortalChallenge: the city portal answers with its
// cookie challenge; the browser runs the script, and the answer is the
// real article, not the challenge. The sim's access log shows every
// request of the render paced as the host's bucket allows.
func TestRenderPassesCityPortalChallenge(t *testing.T) {
	needChromium(t)
	e := newEnv(t, storetest.SQLite(t), withBrowser(nil, nil))
	const host = "www.qingyuan.gov.test"
	art := e.truth(t, host)
	d := e.rendered(t, map[string]any{"url": art.URL, "formats": []string{"markdown", "rawHtml"}})
	if !strings.Contains(*d.Markdown, art.Title) || strings.Contains(*d.RawHTML, sim.ChallengeMarker) {
		t.Errorf("the answer is not the article %q:\n%.500s", art.Title, *d.Markdown)
	}
	ev := d.Acquisition.Evidence
	var challenged, passed bool
	for _, s := range ev.Subrequests {
		if s.Type == "Document" && s.Status == http.StatusPreconditionFailed {
			challenged = true
		}
		if s.Type == "Document" && s.Status == http.StatusOK && challenged {
			passed = true
		}
	}
	if !challenged || !passed {
		t.Errorf("subrequests %+v: want the 412 challenge, then the page", ev.Subrequests)
	}
	log := e.w.AccessLog(host)
	pages := 0
	for _, a := range log {
		if a.Path != "/robots.txt" {
			pages++
		}
	}
	if pages != ev.Attempts {
		t.Errorf("the sim saw %d requests besides robots.txt, the evidence says %d", pages, ev.Attempts)
	}
	for _, v := range sim.PolitenessViolations(host, log, 0) {
		t.Error(v)
	}
}

// TestRenderChallengeNotPassable: a CAPTCHA and a shield that never lets
// anyone in are failures, 502 CHALLENGE_FAILED, and nothing of their page
// is in the answer.
func TestRenderChallengeNotPassable(t *testing.T) {
	needChromium(t)
	cases := []struct {
		name, host string
		fault      sim.Fault
		marker     string
	}{
		{"captcha", "www.gov.test", sim.Fault{Kind: sim.FaultCaptcha}, "验证码"},
		{"shield", "www.qingyuan.gov.test", sim.Fault{Kind: sim.FaultChallenge}, sim.ChallengeMarker},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, storetest.SQLite(t), withBrowser(nil, nil))
			if err := e.w.SetFault(c.host, c.fault); err != nil {
				t.Fatal(err)
			}
			art := e.truth(t, c.host)
			// The longest timeout the API takes: what is tested is how a
			// render that cannot pass the challenge ends, not how fast.
			a := e.post(t, "/v1/render", map[string]any{"url": art.URL, "formats": []string{"markdown", "rawHtml"},
				"timeout": 120000})
			if a.status != http.StatusBadGateway || a.Success || a.Code != CodeChallengeFailed || a.Data != nil {
				t.Fatalf("%s: %d %.500s; want 502 CHALLENGE_FAILED", c.name, a.status, a.raw)
			}
			if strings.Contains(string(a.raw), c.marker) {
				t.Errorf("the failure carries the challenge page: %s", a.raw)
			}
			t.Log(a.Error)
			var sent int
			for _, l := range e.w.AccessLog(c.host) {
				if l.Path != "/robots.txt" {
					sent++
				}
			}
			if sent == 0 {
				t.Errorf("the browser never asked the site")
			}
			for _, v := range sim.PolitenessViolations(c.host, e.w.AccessLog(c.host), 0) {
				t.Error(v)
			}
		})
	}
}

// TestRenderCap: with two renders running, a third is refused at once
// with 503 RENDER_BUSY and Retry-After; once they end, a render is
// admitted again.
func TestRenderCap(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	tier := &RenderTier{}
	e := newEnv(t, storetest.SQLite(t), withBrowser(js, tier))
	var wg sync.WaitGroup
	answers := make([]*answer, 2)
	for i, h := range []string{jsHost, jsHost2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.post(t, "/v1/render", map[string]any{"url": "http://" + h + "/hang.html"})
		}()
	}
	// Both renders hold their slot (the site holds the first page).
	for {
		tier.init()
		if len(tier.slots) == DefaultRenderConcurrency {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := js.count("/news.html")
	a := e.post(t, "/v1/render", map[string]any{"url": "http://" + jsHost + "/news.html"})
	if a.status != http.StatusServiceUnavailable || a.Code != CodeRenderBusy || a.header.Get("Retry-After") == "" {
		t.Errorf("third render: %d %s (Retry-After %q); want 503 RENDER_BUSY with Retry-After", a.status, a.raw, a.header.Get("Retry-After"))
	}
	if js.count("/news.html") != before {
		t.Errorf("the refused render reached the site")
	}
	close(js.release)
	wg.Wait()
	for i, a := range answers {
		if a.status != http.StatusOK || !a.Success {
			t.Errorf("render %d: %d %.300s", i, a.status, a.raw)
		}
	}
	e.rendered(t, map[string]any{"url": "http://" + jsHost + "/news.html"})
}

// TestRenderSSRF: every case of the fetcher's SSRF table is refused by
// /v1/render with 403 URL_REFUSED before Chromium is asked; a page whose
// scripts and XHRs point at all of them renders with each refused, and
// the only connections opened are to the page's own site.
func TestRenderSSRF(t *testing.T) {
	needChromium(t)
	js := newJSSite(t)
	e := newEnv(t, storetest.SQLite(t), withBrowser(js, nil))
	for _, c := range ssrftest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			before := e.dialCount()
			a := e.post(t, "/v1/render", map[string]any{"url": c.URL})
			if a.status != http.StatusForbidden || a.Code != CodeURLRefused || !strings.Contains(a.Error, c.Reason) {
				t.Errorf("%s: %d %s; want 403 URL_REFUSED with %q", c.URL, a.status, a.raw, c.Reason)
			}
			if n := e.dialCount() - before; n != 0 {
				t.Errorf("%s: %d connections opened", c.URL, n)
			}
		})
	}
	before := len(e.dialsNow())
	d := e.rendered(t, map[string]any{"url": "http://" + jsHost + "/ssrf.html"})
	for _, addr := range e.dialsNow()[before:] {
		if addr != js.addr {
			t.Errorf("the rendered page's requests opened a connection to %s", addr)
		}
	}
	for _, s := range d.Acquisition.Evidence.Subrequests {
		if !strings.Contains(s.URL, jsHost) && s.Status != 0 {
			t.Errorf("sub-request %s answered %d", s.URL, s.Status)
		}
	}
	if d.Acquisition.Evidence.SubrequestsTotal < 2 {
		t.Errorf("subrequests %+v: the refused ones are not listed", d.Acquisition.Evidence.Subrequests)
	}
}

// TestRenderWithoutBrowser: no render tier, or a client without a
// browser, answers 503 BROWSER_UNAVAILABLE in plain words, and nothing
// reaches the site.
func TestRenderWithoutBrowser(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  envOption
	}{
		{"no render tier", func(*fetch.ClientOptions, *Deps) {}},
		{"no chromium in the client", func(_ *fetch.ClientOptions, d *Deps) { d.Render = &RenderTier{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, storetest.SQLite(t), c.opt)
			a := e.post(t, "/v1/render", map[string]any{"url": smallURL("/article.html")})
			if a.status != http.StatusServiceUnavailable || a.Code != CodeBrowserUnavailable || !strings.Contains(a.Error, "browser") {
				t.Errorf("%d %s; want 503 BROWSER_UNAVAILABLE", a.status, a.raw)
			}
			if n := e.small.count("/article.html"); n != 0 {
				t.Errorf("%d requests reached the page", n)
			}
		})
	}
}

// TestRenderPoliteness: two clients render pages of the city portal
// while a third fetches them directly, all at once; the sim's own access
// log shows one request in flight at a time and never more than the
// host's bucket allows, browser sub-requests included.
func TestRenderPoliteness(t *testing.T) {
	needChromium(t)
	e := newEnv(t, storetest.SQLite(t), withBrowser(nil, nil))
	const host = "www.qingyuan.gov.test"
	var urls []string
	for _, a := range e.w.Truth() {
		if a.Host == host && !a.RobotsDisallowed && len(urls) < 6 {
			urls = append(urls, a.URL)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	rendered := 0
	for c := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < len(urls); i += 3 {
				if c == 2 {
					e.post(t, "/v1/fetch", map[string]any{"url": urls[i]})
					continue
				}
				for {
					a := e.post(t, "/v1/render", map[string]any{"url": urls[i]})
					if a.Code == CodeRenderBusy {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					if a.status != http.StatusOK {
						t.Errorf("render %s: %d %.300s", urls[i], a.status, a.raw)
					} else {
						mu.Lock()
						rendered++
						mu.Unlock()
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	log := e.w.AccessLog(host)
	if rendered != 4 || len(log) < 8 {
		t.Errorf("%d pages rendered, %d requests at the host", rendered, len(log))
	}
	for _, a := range log {
		if !strings.HasSuffix(a.UserAgent, e.client.UserAgent()) {
			t.Errorf("%s arrived with User-Agent %q", a.Path, a.UserAgent)
		}
	}
	for _, v := range sim.PolitenessViolations(host, log, 0) {
		t.Error(v)
	}
	t.Logf("%d requests at %s", len(log), host)
}
