package acquire

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/fetch"
	"zhizhi/internal/fetch/ssrftest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func crawlURL(path string) string { return "http://" + crawlHost + path }

// TestCrawlJobLimit: a job asks for exactly its limit of pages on a site
// that has many more, each once (the site's own log), and answers them all,
// on both dialects.
func TestCrawlJobLimit(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newCrawlEnv(t, st)
		// The news section has 31 pages, linked two by two.
		id := startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 7, "sitemap": "skip"})
		a := waitJob(t, e.srv.URL, id)
		log := e.site.pages()
		if a.Status != "completed" || a.Completed != 7 || a.Total != 7 || len(a.Data) != 7 || a.CreditsUsed != 0 {
			t.Errorf("job: status %s, completed %d, total %d, %d pages, credits %d; want completed 7 of 7", a.Status,
				a.Completed, a.Total, len(a.Data), a.CreditsUsed)
		}
		if len(log) != 7 {
			t.Errorf("the site was asked for %d pages, want 7: %v", len(log), log)
		}
		if d := twice(log); len(d) > 0 {
			t.Errorf("asked twice: %v", d)
		}
		for _, p := range log {
			if !strings.HasPrefix(p, crawlHost+" /news/") {
				t.Errorf("a page off the job's host was asked for: %s", p)
			}
		}
		// The first page is the start; the others were found on pages.
		if got := sourcePaths(a.Data); got[0] != crawlURL("/news/0.html") {
			t.Errorf("first page %s", got[0])
		}
		for _, d := range a.Data {
			if d.Markdown == nil || !strings.Contains(*d.Markdown, "测试采集任务") || !d.Acquisition.Untrusted || d.Acquisition.Raw.SHA256 == "" {
				t.Errorf("page %s: %+v", d.Metadata.SourceURL, d.Acquisition)
			}
		}
	})
}

// TestCrawlJobScope: depth, include and exclude paths, subdomains, the
// start URL's directory, redirects and robots.txt bound what a job asks
// for; the pages robots.txt refuses are listed, not asked for, not counted.
func TestCrawlJobScope(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	for _, c := range []struct {
		name   string
		body   map[string]any
		want   []string // the pages asked for, as "host path"
		robots []string
	}{
		{
			name: "depth 1",
			body: map[string]any{"url": crawlURL("/"), "maxDiscoveryDepth": 1, "sitemap": "skip"},
			want: []string{crawlHost + " /", crawlHost + " /news/0.html", crawlHost + " /docs/0.html", crawlHost + " /moved.html",
				crawlHost + " /go?to=http%3A%2F%2Fwww.other.gov.test%2F"},
			robots: []string{crawlURL("/private/0.html")},
		},
		{
			name: "depth 0",
			body: map[string]any{"url": crawlURL("/"), "maxDiscoveryDepth": 0, "sitemap": "skip"},
			want: []string{crawlHost + " /"},
		},
		{
			name: "include news",
			body: map[string]any{"url": crawlURL("/"), "maxDiscoveryDepth": 2, "includePaths": []string{"^/news/"}, "sitemap": "skip"},
			want: []string{crawlHost + " /", crawlHost + " /news/0.html", crawlHost + " /news/1.html", crawlHost + " /news/2.html"},
		},
		{
			name:   "exclude news and docs",
			body:   map[string]any{"url": crawlURL("/"), "excludePaths": []string{"^/(news|docs)/", "^/go$"}, "sitemap": "skip"},
			want:   []string{crawlHost + " /", crawlHost + " /moved.html"},
			robots: []string{crawlURL("/private/0.html")},
		},
		{
			name: "subdomains",
			body: map[string]any{"url": crawlURL("/"), "maxDiscoveryDepth": 3, "allowSubdomains": true, "includePaths": []string{"^/s", "^/$"},
				"sitemap": "skip"},
			want: []string{crawlHost + " /", crawlSub + " /s1.html", crawlSub + " /s2.html"},
		},
		{
			name: "the start's directory",
			body: map[string]any{"url": crawlURL("/docs/3.html"), "sitemap": "skip"},
			want: []string{crawlHost + " /docs/3.html", crawlHost + " /docs/7.html", crawlHost + " /docs/8.html",
				crawlHost + " /docs/15.html", crawlHost + " /docs/16.html", crawlHost + " /docs/17.html", crawlHost + " /docs/18.html"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.site.mu.Lock()
			e.site.log = nil
			e.site.mu.Unlock()
			id := startJob(t, e.srv.URL, c.body)
			a := waitJob(t, e.srv.URL, id)
			got := e.site.pages()
			sort.Strings(got)
			want := slices.Clone(c.want)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("asked for\n  %v\nwant\n  %v", got, want)
			}
			errs := do(t, e.srv.URL, http.MethodGet, "/v1/crawl/"+id+"/errors", nil)
			if errs.status != http.StatusOK || !slices.Equal(errs.RobotsBlocked, append([]string{}, c.robots...)) {
				t.Errorf("robotsBlocked %v, want %v (%s)", errs.RobotsBlocked, c.robots, errs.raw)
			}
			if a.Status != "completed" {
				t.Errorf("status %s", a.Status)
			}
		})
	}
}

// TestCrawlJobPaging: a job's pages come a few at a time; next is the
// absolute URL of the following ones and is absent after the last; /v2
// answers the same.
func TestCrawlJobPaging(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t), func(_ *fetch.ClientOptions, d *Deps) { d.CrawlPageSize = 2 })
	id := startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 5, "sitemap": "skip"})
	waitJob(t, e.srv.URL, id)
	var got []string
	next := e.srv.URL + "/v2/crawl/" + id
	sizes := []int{}
	for next != "" {
		a := do(t, e.srv.URL, http.MethodGet, next, nil)
		if a.status != http.StatusOK || a.Status != "completed" || a.Completed != 5 {
			t.Fatalf("GET %s: %d %s", next, a.status, a.raw)
		}
		sizes = append(sizes, len(a.Data))
		got = append(got, sourcePaths(a.Data)...)
		if a.Next != "" && !strings.HasPrefix(a.Next, e.srv.URL+"/v2/crawl/"+id+"?skip=") {
			t.Errorf("next %q is not this job's absolute URL", a.Next)
		}
		next = a.Next
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) || len(got) != 5 || len(twice(got)) != 0 {
		t.Errorf("pages came as %v: %v", sizes, got)
	}
	if a := do(t, e.srv.URL, http.MethodGet, "/v1/crawl/"+id+"?skip=x", nil); a.status != http.StatusBadRequest || !strings.HasPrefix(a.Error, "skip:") {
		t.Errorf("a bad skip: %d %s", a.status, a.raw)
	}
}

// TestCrawlJobCancel: DELETE stops a job before its next page: the page
// under way is kept, nothing more is asked for, and the job says
// cancelled.
func TestCrawlJobCancel(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	hold, arrived := make(chan struct{}), make(chan struct{})
	e.site.mu.Lock()
	e.site.holdPath, e.site.hold, e.site.arrived = "/news/2.html", hold, arrived
	e.site.mu.Unlock()
	id := startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 20, "sitemap": "skip"})
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatalf("the job never reached /news/2.html")
	}
	a := do(t, e.srv.URL, http.MethodDelete, "/v1/crawl/"+id, nil)
	if a.status != http.StatusOK || !a.Success || a.Status != "cancelled" {
		t.Errorf("DELETE: %d %s", a.status, a.raw)
	}
	close(hold)
	e.jobs.wg.Wait() // the job's run has returned
	done := waitJob(t, e.srv.URL, id)
	log := e.site.pages()
	if done.Status != "cancelled" || len(log) != 3 || log[2] != crawlHost+" /news/2.html" {
		t.Errorf("after the cancel: status %s, asked %v", done.Status, log)
	}
	if done.Completed != 3 || len(done.Data) != 3 {
		t.Errorf("the page under way at the cancel was not kept: completed %d, %d pages", done.Completed, len(done.Data))
	}
	// Cancelling an ended job leaves it as it ended.
	if a := do(t, e.srv.URL, http.MethodDelete, "/v2/crawl/"+id, nil); a.status != http.StatusOK || a.Status != "cancelled" {
		t.Errorf("DELETE again: %d %s", a.status, a.raw)
	}
	if a := do(t, e.srv.URL, http.MethodDelete, "/v1/crawl/00000000-0000-4000-8000-000000000000", nil); a.status != http.StatusNotFound || a.Code != CodeNotFound {
		t.Errorf("DELETE of no job: %d %s", a.status, a.raw)
	}
}

// TestCrawlJobSSRF: every target of the SSRF table, linked from a crawled
// page directly and through a redirect, with the job's scope open to every
// name under gov.test: 0 connections anywhere but the site, and the names
// in scope listed as refused. A refused start URL or webhook is refused
// at once.
func TestCrawlJobSSRF(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	var b strings.Builder
	for _, c := range ssrftest.Cases {
		fmt.Fprintf(&b, `<a href="%s">直接</a> <a href="/go?to=%s">跳转</a>`+"\n", c.URL, url.QueryEscape(c.URL))
	}
	e.site.mu.Lock()
	e.site.ssrfPage = b.String()
	e.site.mu.Unlock()
	id := startJob(t, e.srv.URL, map[string]any{"url": "http://" + ssrfHost + "/ssrf.html", "allowSubdomains": true,
		"crawlEntireDomain": true, "limit": 500, "sitemap": "skip"})
	a := waitJob(t, e.srv.URL, id)
	if a.Status != "completed" || a.Completed != 1 {
		t.Errorf("job: %s, completed %d", a.Status, a.Completed)
	}
	for _, d := range e.dialsNow() {
		if d != e.site.addr {
			t.Errorf("a connection to %s", d)
		}
	}
	errs := do(t, e.srv.URL, http.MethodGet, "/v1/crawl/"+id+"/errors", nil)
	refused := map[string]bool{}
	for _, x := range errs.Errors {
		if x.Code == CodeURLRefused {
			refused[x.URL] = true
		}
	}
	for host := range ssrftest.DNS {
		if host == "public.gov.test" {
			continue // linked only with a refused scheme, port or user information
		}
		if !refused["http://"+host+"/"] {
			t.Errorf("%s (in the job's scope) is not listed as refused: %s", host, errs.raw)
		}
	}
	// Only the site's own pages were asked for: the page and its /go hops.
	for _, p := range e.site.pages() {
		if !strings.HasPrefix(p, ssrfHost+" /ssrf.html") && !strings.HasPrefix(p, ssrfHost+" /go?to=") {
			t.Errorf("asked for %s", p)
		}
	}

	before := e.dialCount()
	for _, c := range ssrftest.Cases {
		a := do(t, e.srv.URL, http.MethodPost, "/v1/crawl", map[string]any{"url": c.URL})
		if a.status != http.StatusForbidden || a.Code != CodeURLRefused || !strings.Contains(a.Error, c.Reason) {
			t.Errorf("start at %s: %d %s", c.URL, a.status, a.raw)
		}
		h := do(t, e.srv.URL, http.MethodPost, "/v1/crawl", map[string]any{"url": crawlURL("/"), "webhook": c.URL})
		if h.status != http.StatusBadRequest || !strings.HasPrefix(h.Error, "webhook.url:") {
			t.Errorf("webhook %s: %d %s", c.URL, h.status, h.raw)
		}
	}
	if n := e.dialCount() - before; n != 0 {
		t.Errorf("refused starts and webhooks opened %d connections", n)
	}
}

// TestCrawlJobWebhook: a job posts started, each page, and completed to
// its webhook, with the caller's headers and metadata, through the guard.
func TestCrawlJobWebhook(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	id := startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 3, "sitemap": "skip",
		"webhook": map[string]any{"url": "http://" + hookHost + "/hook", "headers": map[string]string{"X-Hook-Secret": "s3cret"},
			"metadata": map[string]any{"case": "webhook"}}})
	waitJob(t, e.srv.URL, id)
	e.jobs.wg.Wait()
	var types []string
	for _, ev := range e.site.events() {
		types = append(types, ev.Type)
		if ev.ID != id || string(ev.Metadata) != `{"case":"webhook"}` {
			t.Errorf("event %s: id %s, metadata %s", ev.Type, ev.ID, ev.Metadata)
		}
		if ev.Type == "crawl.page" && (len(ev.Data) != 1 || !strings.Contains(string(ev.Data[0]), `"sourceURL":"http://`+crawlHost+`/news/`)) {
			t.Errorf("page event data: %.200s", ev.Data)
		}
	}
	want := []string{"crawl.started", "crawl.page", "crawl.page", "crawl.page", "crawl.completed"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	// Only the events asked for.
	id = startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/docs/0.html"), "limit": 2, "sitemap": "skip",
		"webhook": map[string]any{"url": "http://" + hookHost + "/hook", "events": []string{"completed"}}})
	waitJob(t, e.srv.URL, id)
	e.jobs.wg.Wait()
	if ev := e.site.events(); len(ev) != 6 || ev[5].Type != "crawl.completed" || ev[5].ID != id {
		t.Errorf("with events [completed]: %d events", len(ev))
	}
}

// TestCrawlJobSitemap: sitemap include adds the sitemap's pages in
// scope; only asks for them alone; skip never reads it.
func TestCrawlJobSitemap(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	e.site.mu.Lock()
	e.site.sitemap = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://` + crawlHost + `/docs/30.html</loc></url><url><loc>http://www.other.gov.test/x.html</loc></url>
<url><loc>http://` + crawlHost + `/news/29.html</loc></url></urlset>`
	e.site.mu.Unlock()
	for _, c := range []struct {
		mode string
		want []string
	}{
		{"only", []string{crawlHost + " /", crawlHost + " /docs/30.html", crawlHost + " /news/29.html"}},
		{"include", []string{crawlHost + " /", crawlHost + " /docs/30.html", crawlHost + " /news/29.html", crawlHost + " /news/0.html"}},
		{"skip", []string{crawlHost + " /", crawlHost + " /news/0.html"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			e.site.mu.Lock()
			e.site.log = nil
			e.site.mu.Unlock()
			id := startJob(t, e.srv.URL, map[string]any{"url": crawlURL("/"), "sitemap": c.mode, "maxDiscoveryDepth": 1,
				"includePaths": []string{"^/news/", "^/docs/30"}})
			waitJob(t, e.srv.URL, id)
			got := e.site.pages()
			sort.Strings(got)
			want := slices.Clone(c.want)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("asked for %v, want %v", got, want)
			}
			e.site.mu.Lock()
			readSitemap := slices.Contains(e.site.log, crawlHost+" /sitemap.xml")
			e.site.mu.Unlock()
			if readSitemap != (c.mode != "skip") {
				t.Errorf("sitemap read: %v", readSitemap)
			}
		})
	}
}

// TestCrawlJobBadRequests: each bad body is answered 400 naming its field,
// and no job is made.
func TestCrawlJobBadRequests(t *testing.T) {
	e := newCrawlEnv(t, storetest.SQLite(t))
	ok := crawlURL("/")
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "url:"},
		{map[string]any{"url": "news/0.html"}, "url:"},
		{map[string]any{"url": ok, "limit": 0}, "limit:"},
		{map[string]any{"url": ok, "limit": 10001}, "limit:"},
		{map[string]any{"url": ok, "limit": "ten"}, "limit:"},
		{map[string]any{"url": ok, "maxDiscoveryDepth": -1}, "maxDiscoveryDepth:"},
		{map[string]any{"url": ok, "includePaths": []string{"("}}, "includePaths[0]:"},
		{map[string]any{"url": ok, "excludePaths": "^/a"}, "excludePaths:"},
		{map[string]any{"url": ok, "sitemap": "never"}, "sitemap:"},
		{map[string]any{"url": ok, "allowSubdomains": "yes"}, "allowSubdomains:"},
		{map[string]any{"url": ok, "allowExternalLinks": true}, "allowExternalLinks:"},
		{map[string]any{"url": ok, "ignoreRobotsTxt": true}, "ignoreRobotsTxt:"},
		{map[string]any{"url": ok, "scrapeOptions": map[string]any{"formats": []string{"pdf"}}}, "scrapeOptions.formats[0]:"},
		{map[string]any{"url": ok, "scrapeOptions": map[string]any{"url": ok}}, "scrapeOptions.url:"},
		{map[string]any{"url": ok, "scrapeOptions": []string{}}, "scrapeOptions:"},
		{map[string]any{"url": ok, "webhook": map[string]any{"url": "http://" + hookHost + "/", "events": []string{"done"}}}, "webhook.events[0]:"},
		{map[string]any{"url": ok, "webhook": map[string]any{"url": "http://" + hookHost + "/", "headers": map[string]string{"Host": "x"}}}, "webhook.headers:"},
		{map[string]any{"url": ok, "webhook": map[string]any{"url": "http://" + hookHost + "/", "secret": "x"}}, "webhook.secret:"},
		{map[string]any{"url": ok, "webhook": 7}, "webhook:"},
		{`{"url": "` + ok + `"} {}`, "request body:"},
	} {
		a := do(t, e.srv.URL, http.MethodPost, "/v2/crawl", c.body)
		if a.status != http.StatusBadRequest || a.Success || a.Code != CodeInvalidRequest || !strings.HasPrefix(a.Error, c.field) {
			t.Errorf("%v: %d %s; want 400 naming %s", c.body, a.status, a.raw, c.field)
		}
	}
	if n := len(e.site.pages()); n != 0 {
		t.Errorf("bad requests made the site see %d requests", n)
	}
}
