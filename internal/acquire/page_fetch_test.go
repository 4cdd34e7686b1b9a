package acquire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/fetch/ssrftest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestFetchFormats: one page of the simulated web in every format, with
// its metadata, public attributes and the Acquisition Result whose raw
// reference opens the very bytes the site sent, on both dialects.
func TestFetchFormats(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		art := e.truth(t, "www.gov.test")
		d := e.ok(t, map[string]any{"url": art.URL, "formats": formats})
		if d.Markdown == nil || d.HTML == nil || d.RawHTML == nil || d.Text == nil || d.Links == nil {
			t.Fatalf("a format asked for is missing: %+v", d)
		}
		if !strings.HasPrefix(*d.Markdown, "# "+art.Title) {
			t.Errorf("markdown does not open with the title %q:\n%.300s", art.Title, *d.Markdown)
		}
		// The article's table is a Markdown table.
		if !strings.Contains(*d.Markdown, "| 序号 |") {
			t.Errorf("markdown has no table:\n%s", *d.Markdown)
		}
		if !strings.Contains(*d.RawHTML, "<html") || !strings.Contains(*d.RawHTML, "policyLibraryOverview_header") {
			t.Errorf("rawHtml is not the whole page: %.200s", *d.RawHTML)
		}
		if strings.Contains(*d.HTML, "policyLibraryOverview_header") {
			t.Errorf("html (main content) still has the attribute header")
		}
		if !strings.Contains(*d.Text, art.Title) || strings.Contains(*d.Text, "<") {
			t.Errorf("text is not the plain main text: %.200s", *d.Text)
		}
		m := d.Metadata
		want := map[string][2]string{
			"title": {m.Title, art.Title}, "index_no": {m.IndexNo, art.IndexNo}, "doc_no": {m.DocNo, art.DocNo},
			"publisher": {m.Publisher, art.Publisher}, "sourceURL": {m.SourceURL, art.URL}, "url": {m.URL, art.URL},
			"charset": {m.Charset, "utf-8"}, "cacheState": {m.CacheState, "miss"},
		}
		for k, v := range want {
			if v[0] != v[1] {
				t.Errorf("metadata.%s = %q, want %q", k, v[0], v[1])
			}
		}
		if m.StatusCode != 200 || !strings.HasPrefix(m.ContentType, "text/html") {
			t.Errorf("metadata statusCode %d contentType %q", m.StatusCode, m.ContentType)
		}

		acq := d.Acquisition
		if !acq.Untrusted || acq.Provider != "direct" || acq.SourceURL != art.URL || acq.FinalURL != art.URL {
			t.Errorf("acquisition: %+v", acq)
		}
		if at, err := time.Parse(time.RFC3339, acq.FetchedAt); err != nil || at.Before(t0) || at.After(e.clock.Now()) {
			t.Errorf("fetched_at %q (%v)", acq.FetchedAt, err)
		}
		r, err := st.Blobs().Open(context.Background(), acq.Raw.Ref)
		if err != nil {
			t.Fatalf("raw ref %q does not open: %v", acq.Raw.Ref, err)
		}
		raw, _ := io.ReadAll(r)
		r.Close()
		sum := sha256.Sum256(raw)
		if hex.EncodeToString(sum[:]) != acq.Raw.SHA256 || len(raw) != acq.Raw.Bytes || !strings.Contains(string(raw), art.IndexNo) {
			t.Errorf("raw object: %d bytes, sha256 %x; the answer says %d bytes, %s", len(raw), sum, acq.Raw.Bytes, acq.Raw.SHA256)
		}
		nsum := sha256.Sum256([]byte(*d.Markdown))
		if acq.Normalized.Format != "markdown" || acq.Normalized.SHA256 != hex.EncodeToString(nsum[:]) {
			t.Errorf("normalized: %+v, markdown hashes to %x", acq.Normalized, nsum)
		}
		ev := acq.Evidence
		if ev.Attempts != 1 || ev.Status != 200 || ev.WireBytes <= 0 || ev.Robots != "allowed" || ev.FromSnapshot || ev.TimeoutMS != DefaultTimeout.Milliseconds() {
			t.Errorf("evidence: %+v", ev)
		}
		// The request is in crawl_log, like every request the crawler makes.
		rows, err := st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: "www.gov.test", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		logged := false
		for _, row := range rows {
			logged = logged || row.ArticleURL == art.URL && row.HTTPStatus != nil && *row.HTTPStatus == 200
		}
		if !logged {
			t.Errorf("crawl_log has no row for %s: %+v", art.URL, rows)
		}

		// Default formats: markdown only (metadata is always there).
		d = e.ok(t, map[string]any{"url": art.URL})
		if d.Markdown == nil || d.HTML != nil || d.RawHTML != nil || d.Text != nil || d.Links != nil || d.Metadata.Title != art.Title {
			t.Errorf("default formats: %+v", d)
		}
	})
}

// TestMainContentVersusFull: onlyMainContent (the default) keeps the
// article and drops the navigation and footer; false keeps the page;
// includeTags and excludeTags choose by CSS selector.
func TestMainContentVersusFull(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	u := smallURL("/article.html")
	body := []string{"关于印发《数据管理办法》的通知", "请认真贯彻执行", "联系电话见附件"}
	chrome := []string{"政务公开导航栏", "版权所有", "脚本内容"}
	tests := []struct {
		name          string
		req           map[string]any
		want, wantNot []string
	}{
		{"main content by default", map[string]any{}, body, chrome},
		{"the whole page", map[string]any{"onlyMainContent": false}, append(append([]string{}, body...), "政务公开导航栏", "版权所有"), []string{"脚本内容"}},
		{"includeTags", map[string]any{"includeTags": []string{".footer", "h1"}}, []string{"版权所有", "数据管理办法"}, []string{"请认真贯彻执行", "政务公开导航栏"}},
		{"excludeTags", map[string]any{"onlyMainContent": false, "excludeTags": []string{".nav", "table"}}, []string{"请认真贯彻执行", "版权所有"}, []string{"政务公开导航栏", "数据采集"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"url": u, "formats": []string{"markdown", "text", "html"}}
			for k, v := range tt.req {
				req[k] = v
			}
			d := e.ok(t, req)
			for _, f := range map[string]string{"markdown": *d.Markdown, "text": *d.Text, "html": *d.HTML} {
				for _, w := range tt.want {
					if !strings.Contains(f, w) {
						t.Errorf("%q missing from:\n%s", w, f)
					}
				}
				for _, w := range tt.wantNot {
					if strings.Contains(f, w) {
						t.Errorf("%q should not be in:\n%s", w, f)
					}
				}
			}
		})
	}
	// Links are made absolute in html and markdown.
	d := e.ok(t, map[string]any{"url": u, "onlyMainContent": false, "formats": []string{"markdown", "html", "links"}})
	abs := "http://www.small.gov.test/zwgk/files/rules.html"
	if !strings.Contains(*d.Markdown, "("+abs+")") || !strings.Contains(*d.HTML, `href="`+abs+`"`) || !contains(*d.Links, abs) {
		t.Errorf("links are not absolute:\n%s\n%s\n%v", *d.Markdown, *d.HTML, *d.Links)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestGB18030Page: a page declared only by <meta charset="gb2312">, in
// GB18030 bytes, reads right in every format.
func TestGB18030Page(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	art := e.truth(t, "www.lianzhou.gov.test")
	d := e.ok(t, map[string]any{"url": art.URL, "formats": []string{"markdown", "rawHtml", "text"}})
	if d.Metadata.Charset != "gb18030" || d.Metadata.Title != art.Title || d.Metadata.DocNo != art.DocNo {
		t.Errorf("charset %q title %q doc_no %q; want gb18030, %q, %q", d.Metadata.Charset, d.Metadata.Title, d.Metadata.DocNo, art.Title, art.DocNo)
	}
	for name, f := range map[string]string{"markdown": *d.Markdown, "rawHtml": *d.RawHTML, "text": *d.Text} {
		if !strings.Contains(f, art.Title) || strings.ContainsRune(f, '\uFFFD') {
			t.Errorf("%s does not read right: %.300s", name, f)
		}
	}
}

// TestRobotsDisallowed: a page robots.txt disallows is refused with 403
// and the rule, and the site never sees a request for it.
func TestRobotsDisallowed(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var art sim.TruthArticle
	for _, a := range e.w.Truth() {
		if a.RobotsDisallowed {
			art = a
			break
		}
	}
	if art.URL == "" {
		t.Fatal("the sim has no article robots.txt disallows")
	}
	for _, path := range []string{"/v1/fetch", "/v2/scrape"} {
		a := e.post(t, path, map[string]any{"url": art.URL})
		if a.status != http.StatusForbidden || a.Success || a.Code != CodeRobotsDisallowed || !strings.Contains(a.Error, "robots.txt line") {
			t.Errorf("%s: %d %s", path, a.status, a.raw)
		}
	}
	for _, p := range pathsAt(e.w, art.Host) {
		if p != "/robots.txt" {
			t.Errorf("the site saw a request for %s", p)
		}
	}
	// The small site too, counted by the site itself.
	a := e.post(t, "/v1/fetch", map[string]any{"url": smallURL("/private/x.html")})
	if a.status != http.StatusForbidden || a.Code != CodeRobotsDisallowed || e.small.count("/private/x.html") != 0 {
		t.Errorf("small site: %d %s, %d requests for the page", a.status, a.raw, e.small.count("/private/x.html"))
	}
}

// TestSSRFTable replays every case of the fetcher's SSRF table through
// /v1/fetch: each is refused with 403 URL_REFUSED and the guard's reason,
// and not one connection is opened.
func TestSSRFTable(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, c := range ssrftest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			before := e.dialCount()
			a := e.post(t, "/v1/fetch", map[string]any{"url": c.URL})
			if a.status != http.StatusForbidden || a.Code != CodeURLRefused || !strings.Contains(a.Error, c.Reason) {
				t.Errorf("%s: %d %s; want 403 URL_REFUSED with %q", c.URL, a.status, a.raw, c.Reason)
			}
			if n := e.dialCount() - before; n != 0 {
				t.Errorf("%s: %d connections opened", c.URL, n)
			}
		})
	}
}

// TestSSRFByRedirect: a public page redirecting to a refused address is
// refused at the hop, and the only connection opened is the one to the
// page that redirected.
func TestSSRFByRedirect(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://www.x.gov.test/", "http://127.0.0.1:8080/"} {
		t.Run(target, func(t *testing.T) {
			before := len(e.dialsNow())
			a := e.post(t, "/v1/fetch", map[string]any{"url": smallURL("/go?to=" + url.QueryEscape(target))})
			if a.status != http.StatusForbidden || a.Code != CodeURLRefused || !strings.Contains(a.Error, "refused: ") {
				t.Errorf("redirect to %s: %d %s", target, a.status, a.raw)
			}
			t.Log(a.Error)
			for _, d := range e.dialsNow()[before:] {
				if d != e.small.addr {
					t.Errorf("redirect to %s: a connection to %s", target, d)
				}
			}
		})
	}
}

// TestMaxAge: with maxAge, a young enough snapshot answers without a
// request to the site, on both dialects; an older one does not.
func TestMaxAge(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		art := e.truth(t, "www.gd.gov.test")
		first := e.ok(t, map[string]any{"url": art.URL, "maxAge": 60000})
		if first.Metadata.CacheState != "miss" || first.Acquisition.Evidence.FromSnapshot {
			t.Fatalf("first fetch came from a snapshot: %+v", first.Acquisition)
		}
		e.w.ResetLog()
		e.clock.Advance(30 * time.Second)
		again := e.ok(t, map[string]any{"url": art.URL, "maxAge": 60000, "formats": []string{"markdown", "rawHtml"}})
		ev := again.Acquisition.Evidence
		if n := len(e.w.AccessLog(art.Host)); n != 0 {
			t.Errorf("the site saw %d requests for an answer a 30 s old snapshot could give", n)
		}
		if !ev.FromSnapshot || ev.Attempts != 0 || ev.SnapshotAge == nil || *ev.SnapshotAge != 30000 || again.Metadata.CacheState != "hit" {
			t.Errorf("evidence %+v, cacheState %q", ev, again.Metadata.CacheState)
		}
		if *again.Markdown != *first.Markdown || again.Acquisition.Raw != first.Acquisition.Raw || again.Acquisition.FetchedAt != first.Acquisition.FetchedAt {
			t.Errorf("the snapshot's answer differs from the first")
		}
		// Older than maxAge: the site is asked again.
		e.clock.Advance(time.Minute)
		late := e.ok(t, map[string]any{"url": art.URL, "maxAge": 60000})
		if late.Acquisition.Evidence.FromSnapshot || len(pathsAt(e.w, art.Host)) == 0 {
			t.Errorf("a 90 s old snapshot answered a request with maxAge 60 s")
		}
		// The snapshot's blob is one gc keeps.
		refs, err := st.BlobRefs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !refs[late.Acquisition.Raw.Ref] {
			t.Errorf("BlobRefs does not count the snapshot's raw body %s", late.Acquisition.Raw.Ref)
		}
	})
}

// TestBreakerOpen: a host whose breaker is open is not asked; the answer
// is 503 HOST_BLOCKED with Retry-After until the breaker closes.
func TestBreakerOpen(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	art := e.truth(t, "www.gd.gov.test")
	until := e.clock.Now().Add(90 * time.Minute)
	if err := e.st.PutHostState(context.Background(), &model.HostState{Host: art.Host, ConsecutiveErrors: 5,
		BreakerUntil: &until, UpdatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	a := e.post(t, "/v1/fetch", map[string]any{"url": art.URL})
	if a.status != http.StatusServiceUnavailable || a.Code != CodeHostBlocked {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra != 90*60 {
		t.Errorf("Retry-After %q, want %d", a.header.Get("Retry-After"), 90*60)
	}
	for _, p := range pathsAt(e.w, art.Host) {
		if p != "/robots.txt" {
			t.Errorf("the site saw a request for %s while its breaker was open", p)
		}
	}
}

// TestRobotsUnavailable: robots.txt answering 500 closes the host: 503
// ROBOTS_UNAVAILABLE with Retry-After, and the page is not asked for.
func TestRobotsUnavailable(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	art := e.truth(t, "www.yingde.gov.test")
	if err := e.w.SetFault(art.Host, sim.Fault{Kind: sim.FaultRobots500}); err != nil {
		t.Fatal(err)
	}
	a := e.post(t, "/v1/fetch", map[string]any{"url": art.URL})
	if a.status != http.StatusServiceUnavailable || a.Code != CodeRobotsUnavailable || a.header.Get("Retry-After") == "" {
		t.Errorf("%d %v %s", a.status, a.header, a.raw)
	}
	for _, p := range pathsAt(e.w, art.Host) {
		if p != "/robots.txt" {
			t.Errorf("the site saw a request for %s though its robots.txt failed", p)
		}
	}
}

// TestFetchFailures: what the site answers, or fails to, in the API's
// words.
func TestFetchFailures(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	tests := []struct {
		name   string
		req    map[string]any
		status int
		code   string
		words  string
	}{
		{"a PDF is not a web page", map[string]any{"url": smallURL("/file.pdf")}, 415, CodeUnsupportedContent, "application/pdf"},
		{"not found", map[string]any{"url": smallURL("/no/such.html")}, 502, CodeSiteError, "HTTP 404"},
		{"too slow", map[string]any{"url": smallURL("/slow.html"), "timeout": 300}, 408, CodeTimeout, "300 ms"},
		{"larger than max_bytes", map[string]any{"url": smallURL("/article.html"), "max_bytes": 100}, 502, CodeTooLarge, "100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := e.post(t, "/v1/fetch", tt.req)
			if a.status != tt.status || a.Code != tt.code || a.Success || !strings.Contains(a.Error, tt.words) {
				t.Errorf("%d %s; want %d %s with %q", a.status, a.raw, tt.status, tt.code, tt.words)
			}
		})
	}
	// A longer timeout or a larger max_bytes than the server allows is cut
	// to its limits, as Firecrawl cuts the timeout.
	d := e.ok(t, map[string]any{"url": smallURL("/notice.txt"), "timeout": 99999999, "max_bytes": DefaultMaxBytes * 10})
	if ev := d.Acquisition.Evidence; ev.TimeoutMS != DefaultMaxTimeout.Milliseconds() || ev.MaxBytes != DefaultMaxBytes {
		t.Errorf("limits applied: timeout %d ms, max_bytes %d; want %d, %d", ev.TimeoutMS, ev.MaxBytes, DefaultMaxTimeout.Milliseconds(), DefaultMaxBytes)
	}
	// Plain text is read as text.
	d = e.ok(t, map[string]any{"url": smallURL("/notice.txt"), "formats": []string{"markdown", "text"}})
	if *d.Markdown != "停水通知：明日上午停水。" || *d.Text != *d.Markdown {
		t.Errorf("text/plain: %q %q", *d.Markdown, *d.Text)
	}
}

// TestBadRequests: every malformed request is one 400 naming the field,
// and nothing is fetched.
func TestBadRequests(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	u := smallURL("/article.html")
	tests := []struct {
		name, body, words string
	}{
		{"unknown field", `{"url":"` + u + `","ignoreRobotsTxt":true}`, "ignoreRobotsTxt: unknown field"},
		{"no url", `{"formats":["markdown"]}`, "url: required"},
		{"relative url", `{"url":"/zwgk/a.html"}`, "url:"},
		{"http without host", `{"url":"http:///a.html"}`, "url:"},
		{"url not a string", `{"url":42}`, "url: a string"},
		{"unknown format", `{"url":"` + u + `","formats":["markdown","screenshot"]}`, "formats[1]"},
		{"formats not a list", `{"url":"` + u + `","formats":"markdown"}`, "formats:"},
		{"bad selector", `{"url":"` + u + `","includeTags":["div[["]}`, "includeTags[0]"},
		{"negative timeout", `{"url":"` + u + `","timeout":-5}`, "timeout:"},
		{"fractional maxAge", `{"url":"` + u + `","maxAge":1.5}`, "maxAge:"},
		{"zero max_bytes", `{"url":"` + u + `","max_bytes":0}`, "max_bytes:"},
		{"onlyMainContent not a boolean", `{"url":"` + u + `","onlyMainContent":"yes"}`, "onlyMainContent: true or false"},
		{"control character", `{"url":"` + u + `\u0000"}`, "url: holds a control character"},
		{"control character in a list", `{"url":"` + u + `","excludeTags":["div","a\u001b"]}`, "excludeTags[1]: holds a control character"},
		{"not an object", `["` + u + `"]`, "one JSON object"},
		{"two objects", `{"url":"` + u + `"}{}`, "more found"},
		{"not JSON", `url=` + u, "JSON"},
		{"empty", ``, "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := e.post(t, "/v1/fetch", tt.body)
			if a.status != http.StatusBadRequest || a.Code != CodeInvalidRequest || a.Success || !strings.Contains(a.Error, tt.words) {
				t.Errorf("%s: %d %s; want 400 invalid_request with %q", tt.body, a.status, a.raw, tt.words)
			}
		})
	}
	// A body that does not say it is JSON.
	resp, err := http.Post(e.srv.URL+"/v1/fetch", "text/plain", strings.NewReader(`{"url":"`+u+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("text/plain body: %d", resp.StatusCode)
	}
	if n := e.small.count("/article.html"); n != 0 || e.dialCount() != 0 {
		t.Errorf("bad requests reached the site: %d requests, %d connections", n, e.dialCount())
	}
}

// TestPolitenessThroughTheAPI: three clients hammer one host through
// /v1/fetch at once; the site's own access log shows one request in
// flight at a time and never more than the host's bucket allows.
func TestPolitenessThroughTheAPI(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	const host = "www.qingcheng.gov.test"
	var urls []string
	for _, a := range e.w.Truth() {
		if a.Host == host && !a.RobotsDisallowed && len(urls) < 24 {
			urls = append(urls, a.URL)
		}
	}
	if len(urls) < 24 {
		t.Fatalf("the sim has %d pages at %s, want 24", len(urls), host)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for c := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < len(urls); i += 3 {
				// Each client asks for every page of its share twice.
				for range 2 {
					a := e.post(t, "/v1/fetch", map[string]any{"url": urls[i]})
					if a.status != http.StatusOK {
						mu.Lock()
						failed++
						mu.Unlock()
						t.Errorf("%s: %d %s", urls[i], a.status, a.raw)
					}
				}
			}
		}()
	}
	wg.Wait()
	log := e.w.AccessLog(host)
	pages := 0
	for _, a := range log {
		if a.Path != "/robots.txt" {
			pages++
		}
	}
	if pages != 2*len(urls)-failed {
		t.Errorf("the site saw %d page requests, the clients made %d", pages, 2*len(urls))
	}
	for _, v := range sim.PolitenessViolations(host, log, 0) {
		t.Error(v)
	}
	t.Logf("%d requests at %s over %v of client time", len(log), host, log[len(log)-1].Arrived.Sub(log[0].Arrived))
}
