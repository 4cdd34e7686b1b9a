package crawl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCrawlWorldMatchesTruth crawls the whole bundled world and scores the
// store against the simulation's ground truth, on both dialects.
func TestCrawlWorldMatchesTruth(t *testing.T) {
	browser := chromium(t)
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, browser)
		results := w.crawl(t, nil, browser)
		blocked := 0
		for _, r := range results {
			if r.Blocked != "" {
				blocked++
				if !strings.Contains(r.Blocked, "robots.txt") {
					t.Errorf("%s blocked for %q", r.TargetCode, r.Blocked)
				}
			}
		}
		if blocked != 1 {
			t.Errorf("%d targets blocked by robots.txt, want 1 (gd_ref_rsrm)", blocked)
		}
		crawltest.Score(t, st, w.sim.Truth(), browser).Assert(t)

		// A site that says how many list pages it has (TRS createPageHTML)
		// is not asked for the page after the last.
		for _, acc := range w.sim.AccessLog("www.lianzhou.gov.test") {
			if acc.Status == 404 {
				t.Errorf("lianzhou was asked for a page that is not there: %s", acc.Path)
			}
		}

		// The output contract (seed 004 §7.5.7): fetch_strategy agrees with
		// the tier crawl_log recorded for the same URL.
		ctx := context.Background()
		for _, a := range crawltest.AllArticles(t, st) {
			if a.Status != model.StatusReady {
				continue
			}
			norm, _ := extract.NormalizeURL(a.URL)
			if norm != a.URL {
				t.Errorf("stored URL %q is not normalized (%q)", a.URL, norm)
			}
			host := strings.SplitN(strings.TrimPrefix(a.URL, "http://"), "/", 2)[0]
			logs, err := st.ListCrawlLogs(ctx, store.CrawlLogFilter{Host: host, Limit: 100000})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, l := range logs {
				if l.ArticleURL == a.URL && l.Success {
					found = true
					if l.Strategy != a.FetchStrategy {
						t.Errorf("%s: fetch_strategy %q but crawl_log says %q", a.URL, a.FetchStrategy, l.Strategy)
					}
				}
			}
			if !found {
				t.Errorf("%s: no successful crawl_log row", a.URL)
			}
		}
	})
}

// TestSecondCrawlIsIncremental advances the simulated clock (new articles,
// edited old ones) and checks the second crawl asked only for new and
// changed pages, got 304 for the rest and stored the edits.
func TestSecondCrawlIsIncremental(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	start := time.Now()
	w.crawl(t, nil, false)
	before := crawltest.AllArticles(t, st)

	rep := w.sim.Advance(72 * time.Hour)
	if len(rep.Published) == 0 || len(rep.Edited) == 0 {
		t.Fatalf("advance published %d and edited %d articles; the test needs both", len(rep.Published), len(rep.Edited))
	}
	w.sim.ResetLog()
	// The crawler's own clock moves past every url_state next_check_at
	// (at least an hour after the first check).
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	w.crawl(t, later, false)
	_ = start

	changed := map[string]bool{}
	for _, u := range append(rep.Published, rep.Edited...) {
		n, _ := extract.NormalizeURL(u)
		changed[n] = true
	}
	full := 0
	for _, acc := range w.sim.AllAccess() {
		// A summary site's head read is a 206 from a site that serves ranges.
		if acc.Host == "www.qingyuan.gov.test" || acc.Method != "GET" || acc.Status != 200 && acc.Status != 206 {
			continue
		}
		u, _ := extract.NormalizeURL("http://" + acc.Host + acc.Path)
		if _, known := before[mustHash(u)]; known && !changed[u] {
			t.Errorf("unchanged known page fetched in full again: %s", u)
		}
		full++
	}
	if full == 0 {
		t.Error("the second crawl fetched nothing in full")
	}

	fetchedFull := map[string]bool{}
	for _, acc := range w.sim.AllAccess() {
		if acc.Method == "GET" && (acc.Status == 200 || acc.Status == 206) {
			u, _ := extract.NormalizeURL("http://" + acc.Host + acc.Path)
			fetchedFull[u] = true
		}
	}
	after := crawltest.AllArticles(t, st)
	truth := map[string]string{}
	for _, a := range w.sim.Truth() {
		n, _ := extract.NormalizeURL(a.URL)
		truth[n] = a.BodyText
	}
	for _, u := range rep.Edited {
		if strings.Contains(u, "www.qingyuan.gov.test") {
			continue
		}
		n, _ := extract.NormalizeURL(u)
		a, ok := after[mustHash(n)]
		if !ok {
			t.Errorf("edited article %s not stored", u)
			continue
		}
		if !fetchedFull[n] {
			t.Errorf("edited article %s was not fetched again", u)
		}
		if strings.Contains(u, "www.news.test") {
			continue // summary access: no body is stored to compare
		}
		if before[mustHash(n)].ContentText == a.ContentText {
			t.Errorf("edit of %s not stored", u)
		}
		if s := crawltest.Similarity(truth[n], a.ContentText); s < 0.95 {
			t.Errorf("edited %s: stored body %.3f similar to the truth", u, s)
		}
	}
	for _, u := range rep.Published {
		if strings.Contains(u, "www.qingyuan.gov.test") || strings.Contains(u, "/zwgk/rsrm/") {
			continue
		}
		n, _ := extract.NormalizeURL(u)
		if _, ok := after[mustHash(n)]; !ok {
			t.Errorf("new article %s not stored", u)
		}
	}
}

func mustHash(u string) string {
	_, h, _ := extract.URLHash(u)
	return h
}
