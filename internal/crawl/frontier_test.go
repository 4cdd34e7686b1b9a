package crawl_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/sim"
	"zhizhi/internal/store/storetest"
)

// TestRetryIn: a failed link is tried again 1 h after its first failure,
// the wait doubling with each further failure, never more than 7 days.
func TestRetryIn(t *testing.T) {
	for _, c := range []struct {
		failures int
		want     time.Duration
	}{
		{1, time.Hour}, {2, 2 * time.Hour}, {3, 4 * time.Hour}, {4, 8 * time.Hour},
		{8, 128 * time.Hour}, {9, 7 * 24 * time.Hour}, {40, 7 * 24 * time.Hour},
	} {
		if got := crawl.RetryIn(c.failures); got != c.want {
			t.Errorf("RetryIn(%d) = %s, want %s", c.failures, got, c.want)
		}
	}
}

// detailPaths is every path of a truth article or attachment, by host: a
// request for one of them is a detail (or attachment) request.
func detailPaths(truth []sim.TruthArticle) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if out[u.Host] == nil {
			out[u.Host] = map[string]bool{}
		}
		out[u.Host][u.RequestURI()] = true
	}
	for _, a := range truth {
		add(a.URL)
		for _, at := range a.Attachments {
			add(at.URL)
		}
	}
	return out
}

// TestImmediateRecrawlAsksOnlyForLists: a re-crawl of an unchanged world
// right after a crawl asks each host for its robots.txt, each target's
// first list page and each gkmlpt department's index, and no article or
// attachment (the sim's own access log says so). After the sim's clock
// moves on, a crawl collects exactly the new and edited articles.
func TestImmediateRecrawlAsksOnlyForLists(t *testing.T) {
	browser := chromium(t)
	st := storetest.SQLite(t)
	w := newWorld(t, st, browser)
	began := time.Now()
	first := w.crawl(t, nil, browser)
	firstTook := time.Since(began)
	crawltest.Score(t, st, w.sim.Truth(), browser).Assert(t)
	firstRequests := len(w.sim.AllAccess())

	w.sim.ResetLog()
	began = time.Now()
	again := w.crawl(t, nil, browser)
	t.Logf("first crawl: %d requests in %s; immediate re-crawl: %d requests in %s (owned-host rates)",
		firstRequests, firstTook.Round(time.Millisecond), len(w.sim.AllAccess()), time.Since(began).Round(time.Millisecond))
	if code := crawl.ExitCode(again); code != crawl.ExitOK {
		t.Errorf("re-crawl exit code %d, want 0", code)
	}
	details := detailPaths(w.sim.Truth())
	perHost := map[string]int{}
	for _, acc := range w.sim.AllAccess() {
		if details[acc.Host][acc.Path] {
			t.Errorf("re-crawl of an unchanged world asked for an article or attachment: %s%s (%d)", acc.Host, acc.Path, acc.Status)
		}
		if acc.Path != "/robots.txt" {
			perHost[acc.Host]++
		}
	}
	// What a re-crawl may cost: one list page per target, one index per
	// gkmlpt department (the city portal's browser loads its page's own
	// assets too, so its count is not pinned).
	ctx := context.Background()
	want := map[string]int{}
	depts := map[string]bool{}
	for _, r := range first {
		if r.Blocked != "" {
			continue
		}
		tg, err := st.TargetByCode(ctx, r.TargetCode)
		if err != nil {
			t.Fatal(err)
		}
		site, err := st.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		host := strings.TrimPrefix(strings.TrimPrefix(site.BaseURL, "http://"), "https://")
		want[host]++
		if tg.SiteDepartmentID != nil && !depts[fmtKey(host, *tg.SiteDepartmentID)] {
			depts[fmtKey(host, *tg.SiteDepartmentID)] = true
			want[host]++
		}
	}
	for host, n := range want {
		if host == crawltest.CityPortalHost {
			continue
		}
		if perHost[host] != n {
			t.Errorf("%s: re-crawl made %d requests besides robots.txt, want %d (one per list and gkmlpt index)", host, perHost[host], n)
		}
	}

	rep := w.sim.Advance(72 * time.Hour)
	if len(rep.Published) == 0 || len(rep.Edited) == 0 {
		t.Fatalf("advance published %d and edited %d articles; the test needs both", len(rep.Published), len(rep.Edited))
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	w.crawl(t, later, browser)
	crawltest.Score(t, st, w.sim.Truth(), browser).Assert(t)
}

func fmtKey(host string, id int64) string { return fmt.Sprintf("%s/%d", host, id) }

// TestFailedListPageAndDetailAreCollectedNextRun: a 503 on a list's second
// page and on one article fails the first run (exit 1) without losing
// either: the next run, when the article's retry is due, collects both and
// exits 0.
func TestFailedListPageAndDetailAreCollectedNextRun(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	const host = "www.lianzhou.gov.test"
	var detail string
	for _, a := range w.sim.Truth() {
		if a.TargetCode == "lianzhou_tzgg" {
			detail = a.URL // newest first: on the first list page
			break
		}
	}
	if detail == "" {
		t.Fatal("no lianzhou_tzgg article in the truth")
	}
	du, _ := url.Parse(detail)
	for _, f := range []sim.Fault{
		{Kind: sim.Fault503, PathPrefix: "/tzgg/index_1.html", Count: 1},
		{Kind: sim.Fault503, PathPrefix: du.Path, Count: 1},
	} {
		if err := w.sim.SetFault(host, f); err != nil {
			t.Fatal(err)
		}
	}
	first := w.w.Crawler(nil).Run(context.Background(), w.w.Targets(t, false))
	if code := crawl.ExitCode(first); code != crawl.ExitFailed {
		t.Errorf("first run: exit code %d, want 1", code)
	}
	var tz crawl.Result
	for _, r := range first {
		if r.TargetCode == "lianzhou_tzgg" {
			tz = r
		}
	}
	if tz.Err == nil || !strings.Contains(tz.Err.Error(), "list page 2") {
		t.Errorf("lianzhou_tzgg first run error %v, want list page 2 named", tz.Err)
	}
	if tz.Failed != 1 {
		t.Errorf("lianzhou_tzgg first run: %d articles failed, want 1", tz.Failed)
	}
	stored := crawltest.AllArticles(t, st)
	if _, ok := stored[mustHash(mustNorm(detail))]; ok {
		t.Fatalf("the article that answered 503 is stored")
	}
	for _, f := range w.sim.Faults()[host] {
		t.Fatalf("fault left unused: %+v", f)
	}

	// The next scheduled run, a day later.
	next := func() time.Time { return time.Now().Add(24 * time.Hour) }
	second := w.w.Crawler(next).Run(context.Background(), w.w.Targets(t, false))
	if code := crawl.ExitCode(second); code != crawl.ExitOK {
		for _, r := range second {
			if r.Err != nil || r.Failed > 0 {
				t.Logf("%s: %v %v", r.TargetCode, r.Err, r.Problems)
			}
		}
		t.Errorf("second run: exit code %d, want 0", code)
	}
	crawltest.Score(t, st, w.sim.Truth(), false).Assert(t)
}

func mustNorm(u string) string {
	n, err := extract.NormalizeURL(u)
	if err != nil {
		panic(err)
	}
	return n
}
