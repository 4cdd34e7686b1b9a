package crawl_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestTransientRetryIn: a link that failed for a passing reason is tried
// again 5 minutes after its first failure, then 10, 20 and 40 minutes,
// then 1 h, 2 h, 4 h … never more than 7 days apart.
func TestTransientRetryIn(t *testing.T) {
	for _, c := range []struct {
		failures int
		want     time.Duration
	}{
		{1, 5 * time.Minute}, {2, 10 * time.Minute}, {3, 20 * time.Minute}, {4, 40 * time.Minute},
		{5, time.Hour}, {6, 2 * time.Hour}, {7, 4 * time.Hour}, {12, 128 * time.Hour},
		{13, 7 * 24 * time.Hour}, {40, 7 * 24 * time.Hour},
	} {
		if got := crawl.TransientRetryIn(c.failures); got != c.want {
			t.Errorf("TransientRetryIn(%d) = %s, want %s", c.failures, got, c.want)
		}
	}
}

// TestPassingFaultRetriedWithinMinutes: a 503 on an article page leaves the
// article waiting for a retry 5 minutes away. A run right after does not
// ask for it but does not call itself a success either: exit 1, the
// article named with its retry time. A run 6 minutes later fetches it (a
// second 503: now 10 minutes away), one 12 minutes in leaves it alone, and
// one 17 minutes in collects it and exits 0. A 404 is not a passing fault:
// that link is gone and never asked for again.
func TestPassingFaultRetriedWithinMinutes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, false)
		const host, code = "www.lianzhou.gov.test", "lianzhou_tzgg"
		var urls []string
		for _, a := range w.sim.Truth() {
			if a.TargetCode == code {
				urls = append(urls, a.URL) // newest first: on the first list page
			}
		}
		if len(urls) < 2 {
			t.Fatalf("%d articles of %s in the truth, want 2", len(urls), code)
		}
		flaky, dead := mustParseURL(t, urls[0]), mustParseURL(t, urls[1])
		for _, f := range []sim.Fault{
			{Kind: sim.Fault503, PathPrefix: flaky.Path, Count: 2},
			{Kind: sim.FaultRedirect, PathPrefix: dead.Path, Location: "/tzgg/removed-by-the-site.html", Count: 1},
		} {
			if err := w.sim.SetFault(host, f); err != nil {
				t.Fatal(err)
			}
		}
		var targets []model.Target
		for _, tg := range w.w.Targets(t, false) {
			if tg.TargetCode == code {
				targets = append(targets, tg)
			}
		}
		if len(targets) != 1 {
			t.Fatalf("target %s not found", code)
		}
		asked := func(path string) int {
			n := 0
			for _, a := range w.sim.AccessLog(host) {
				if a.Path == path {
					n++
				}
			}
			return n
		}
		// run crawls the target on a clock `in` ahead of the wall clock.
		run := func(in time.Duration) crawl.Result {
			t.Helper()
			w.sim.ResetLog()
			rs := w.w.Crawler(func() time.Time { return time.Now().Add(in) }).Run(ctx, targets)
			if len(rs) != 1 {
				t.Fatalf("%d results, want 1", len(rs))
			}
			if asked(dead.Path) > 0 && in > 0 {
				t.Errorf("run at +%s asked again for %s, which answered 404", in, dead.Path)
			}
			return rs[0]
		}
		flakyURL := mustNorm(flaky.String())
		waiting := func(r crawl.Result, when string, lo, hi time.Time) {
			t.Helper()
			if code := crawl.ExitCode([]crawl.Result{r}); code != crawl.ExitFailed {
				t.Errorf("%s: exit code %d while an article waits for a retry, want 1", when, code)
			}
			if r.Retrying != 1 || len(r.Retries) != 1 || r.Retries[0].URL != flakyURL {
				t.Fatalf("%s: %d waiting for a retry %+v, want the one that answered 503 (%s)", when, r.Retrying, r.Retries, flakyURL)
			}
			next := r.Retries[0].NextAttemptAt
			if next == nil || next.Before(lo) || next.After(hi) {
				t.Errorf("%s: next attempt at %v, want between %v and %v", when, next, lo, hi)
			}
			var out bytes.Buffer
			crawl.WriteTable(&out, []crawl.Result{r})
			for _, s := range []string{"1 篇待重试（下次 ", next.In(zone.Display()).Format("15:04 MST") + "）", flakyURL, "503"} {
				if !strings.Contains(out.String(), s) {
					t.Errorf("%s: the summary does not say %q:\n%s", when, s, out.String())
				}
			}
			if rec, _ := crawl.RunRecord(targets[0], r, "test"); rec.Outcome != store.RunFailed {
				t.Errorf("%s: the run is recorded %s, want failed: an article is missing", when, rec.Outcome)
			}
		}

		before := time.Now()
		first := run(0)
		after := time.Now()
		if asked(flaky.Path) != 1 || asked(dead.Path) != 1 {
			t.Fatalf("the first run asked %d times for the flaky article and %d for the dead one, want 1 and 1", asked(flaky.Path), asked(dead.Path))
		}
		waiting(first, "first run", before.Add(5*time.Minute), after.Add(5*time.Minute))
		entries, err := st.FrontierEntries(ctx, targets[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.URL == mustNorm(dead.String()) && e.State != store.FrontierGone {
				t.Errorf("the link that answered 404 is %s, want gone (not retried)", e.State)
			}
		}

		again := run(0)
		if n := asked(flaky.Path); n != 0 {
			t.Errorf("a run right after asked for the failed article %d times before its retry time", n)
		}
		waiting(again, "a run right after", before.Add(5*time.Minute), after.Add(5*time.Minute))

		before = time.Now()
		second := run(6 * time.Minute)
		after = time.Now()
		if n := asked(flaky.Path); n != 1 {
			t.Fatalf("the run 6 minutes later asked for the failed article %d times, want 1", n)
		}
		waiting(second, "6 minutes later", before.Add(16*time.Minute), after.Add(16*time.Minute))

		if r := run(12 * time.Minute); asked(flaky.Path) != 0 {
			t.Errorf("12 minutes in, 6 after its second failure, the article was asked for again (%d waiting)", r.Retrying)
		}

		last := run(17 * time.Minute)
		if n := asked(flaky.Path); n != 1 {
			t.Fatalf("17 minutes in the article was asked for %d times, want 1", n)
		}
		if code := crawl.ExitCode([]crawl.Result{last}); code != crawl.ExitOK || last.Retrying != 0 {
			t.Errorf("17 minutes in: exit %d with %d waiting (%v %v), want 0 and none", code, last.Retrying, last.Err, last.Problems)
		}
		if _, ok := crawltest.AllArticles(t, st)[mustHash(flakyURL)]; !ok {
			t.Error("the article is not stored after its retry")
		}
		if left := w.sim.Faults()[host]; len(left) > 0 {
			t.Errorf("faults left unused: %+v", left)
		}
	})
}

func mustParseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
