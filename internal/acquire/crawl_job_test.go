package acquire

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

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
			name: "exclude news and docs",
			body: map[string]any{"url": crawlURL("/"), "excludePaths": []string{"^/(news|docs)/", "^/go$"}, "sitemap": "skip"},
			want: []string{crawlHost + " /", crawlHost + " /moved.html"},
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
	_ = context.Background
}
