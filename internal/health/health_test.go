package health_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const (
	brokenHost  = "www.gov.test"  // answers 503 to everything, robots.txt included
	captchaHost = "www.news.test" // shows a CAPTCHA instead of its news list
)

// crawledWorld crawls the simulated web's lianzhou site (healthy), the
// national reference site (every answer a 503) and the news site (a
// CAPTCHA instead of its list), records every run, and returns the world.
func crawledWorld(t *testing.T, st *store.Store) *crawltest.World {
	t.Helper()
	ctx := context.Background()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: "../../demo/config", Sim: sim.Options{Seed: 1}})
	if err := w.Sim.SetFault(brokenHost, sim.Fault{Kind: sim.Fault503}); err != nil {
		t.Fatal(err)
	}
	if err := w.Sim.SetFault(captchaHost, sim.Fault{Kind: sim.FaultCaptcha, PathPrefix: "/news/"}); err != nil {
		t.Fatal(err)
	}
	var targets []model.Target
	for _, site := range []string{"lianzhou", "gov_ref", "news"} {
		ts, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: site, EnabledOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, ts...)
	}
	results := w.Crawler(nil).Run(ctx, targets)
	for i, r := range results {
		if err := crawl.RecordRun(ctx, st, targets[i], r, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func targetByCode(t *testing.T, st *store.Store, code string) *model.Target {
	t.Helper()
	tg, err := st.TargetByCode(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func staleCodes(r health.Report) []string {
	var out []string
	for _, s := range r.Stale {
		out = append(out, s.TargetCode)
	}
	return out
}

// TestHealthOfACrawledWorld: on a crawled world with a broken host and a
// host that shows a CAPTCHA, health lists the targets whose last run
// failed and the two hosts with why, and not the healthy site; a column
// whose cadence is 7 days turns stale strictly after 21 days without a new
// article, not at 21; a column never crawled counts from when it was added.
func TestHealthOfACrawledWorld(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		crawledWorld(t, st)
		now := time.Now()

		rep, err := health.Check(ctx, st, now)
		if err != nil {
			t.Fatal(err)
		}
		var failing []string
		for _, f := range rep.Failing {
			failing = append(failing, f.TargetCode)
			if f.Run.Runner != "test" || f.Run.Error == "" {
				t.Errorf("failing target %s: last run %+v, want the test's run with its error", f.TargetCode, f.Run)
			}
		}
		if want := []string{"gov_ref_jiedu", "gov_ref_xxgk", "gov_ref_zuixin", "news_local"}; !slices.Equal(failing, want) {
			t.Errorf("failing targets %v, want %v (the broken host's and the CAPTCHA's; lianzhou's crawl was clean)", failing, want)
		}
		hosts := map[string]health.HostIssue{}
		for _, h := range rep.Hosts {
			hosts[h.Host] = h
		}
		if h, ok := hosts[brokenHost]; !ok || !h.Has(health.HostRobots) || h.RobotsError == "" {
			t.Errorf("broken host listed as %+v, want robots.txt unreachable with its error", h)
		}
		if h, ok := hosts[captchaHost]; !ok || !h.Has(health.HostCaptcha) || !h.Has(health.HostReview) || !h.Has(health.HostBreaker) {
			t.Errorf("CAPTCHA host listed as %+v, want captcha, review and breaker", h)
		}
		if _, ok := hosts["www.lianzhou.gov.test"]; ok || len(hosts) != 2 {
			t.Errorf("hosts listed %v, want only the broken and the CAPTCHA host", rep.Hosts)
		}
		if rep.Problems() == 0 {
			t.Error("a report listing problems counts none")
		}

		// lianzhou_zcwj is a weekly column (expected_cadence_days: 7 in its
		// site file): stale after 3 × 7 = 21 days without a new article.
		zcwj := targetByCode(t, st, "lianzhou_zcwj")
		if zcwj.ExpectedCadenceDays != 7 || zcwj.LastArticleTime == nil {
			t.Fatalf("lianzhou_zcwj: cadence %d, last article %v; want a crawled weekly column", zcwj.ExpectedCadenceDays, zcwj.LastArticleTime)
		}
		last := *zcwj.LastArticleTime
		day := 24 * time.Hour
		for _, c := range []struct {
			at    time.Time
			stale bool
		}{
			{last.Add(20 * day), false},
			{last.Add(21 * day), false},
			{last.Add(21*day + time.Minute), true},
			{last.Add(40 * day), true},
		} {
			rep, err := health.Check(ctx, st, c.at)
			if err != nil {
				t.Fatal(err)
			}
			stale := slices.Contains(staleCodes(rep), "lianzhou_zcwj")
			if stale != c.stale {
				t.Errorf("%v after its last article, lianzhou_zcwj stale = %v, want %v", c.at.Sub(last), stale, c.stale)
			}
			if stale {
				for _, s := range rep.Stale {
					if s.TargetCode == "lianzhou_zcwj" && (s.LimitDays != 21 || !s.QuietSince.Equal(last) || s.LastArticleTime == nil) {
						t.Errorf("stale entry %+v, want limit 21 days, quiet since the last article", s)
					}
				}
			}
		}

		// gd_ref_wjk was never crawled. It is listed as 从未采集 once its
		// first scheduled time after it was added (a daily "M H * * *",
		// read in Asia/Shanghai) plus a 6-hour grace has passed — not when
		// 3 × its cadence of 4 days runs out, 12 days later.
		wjk := targetByCode(t, st, "gd_ref_wjk")
		if wjk.LastArticleTime != nil || wjk.LastCrawledAt != nil || wjk.ExpectedCadenceDays != 4 {
			t.Fatalf("gd_ref_wjk: last article %v, crawled %v, cadence %d; want never crawled, cadence 4", wjk.LastArticleTime, wjk.LastCrawledAt, wjk.ExpectedCadenceDays)
		}
		var minute, hour int
		if n, err := fmt.Sscanf(wjk.ScheduleCron, "%d %d * * *", &minute, &hour); n != 2 || err != nil {
			t.Fatalf("gd_ref_wjk: schedule %q, want a daily one", wjk.ScheduleCron)
		}
		cst := time.FixedZone("CST", 8*3600)
		added := wjk.CreatedAt.In(cst)
		slot := time.Date(added.Year(), added.Month(), added.Day(), hour, minute, 0, 0, cst)
		if !slot.After(wjk.CreatedAt) {
			slot = slot.AddDate(0, 0, 1)
		}
		due := slot.Add(6 * time.Hour)
		for _, c := range []struct {
			at    time.Time
			never bool
		}{
			{wjk.CreatedAt.Add(time.Minute), false},
			{due.Add(-time.Minute), false},
			{due.Add(time.Minute), true},
			{wjk.CreatedAt.Add(12*day + time.Minute), true},
		} {
			rep, err := health.Check(ctx, st, c.at)
			if err != nil {
				t.Fatal(err)
			}
			var got *health.StaleTarget
			for i := range rep.Stale {
				if rep.Stale[i].TargetCode == "gd_ref_wjk" {
					got = &rep.Stale[i]
				}
			}
			if (got != nil) != c.never || (got != nil && !got.NeverCollected) {
				t.Errorf("never-crawled gd_ref_wjk (schedule %q) %v after it was added: listed %+v, want listed as never collected = %v",
					wjk.ScheduleCron, c.at.Sub(wjk.CreatedAt), got, c.never)
			}
		}
		// A target that was crawled is never "never collected", however
		// quiet it has been since.
		rep, err = health.Check(ctx, st, last.Add(40*day))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Stale {
			if tg := targetByCode(t, st, s.TargetCode); s.NeverCollected && (tg.LastCrawledAt != nil || tg.LastArticleTime != nil) {
				t.Errorf("%s is listed as never collected, but it was crawled", s.TargetCode)
			}
		}
	})
}

// TestIsStale: the rule as the requirement writes it, now − last article
// > 3 × cadence days, for the cadences the defaults suggest.
func TestIsStale(t *testing.T) {
	last := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		cadence int
		quiet   time.Duration
		stale   bool
	}{
		{7, 20 * day, false},
		{7, 21 * day, false},
		{7, 21*day + time.Second, true},
		{3, 9*day + time.Second, true},
		{3, 9 * day, false},
		{90, 269 * day, false},
		{90, 271 * day, true},
		{30, 91 * day, true},
	} {
		if got := health.IsStale(last, c.cadence, last.Add(c.quiet)); got != c.stale {
			t.Errorf("cadence %d days, quiet %v: stale = %v, want %v", c.cadence, c.quiet, got, c.stale)
		}
	}
}

// An article whose fetch failed is listed, with its retry time, until a
// retry brings it: health is not all well while an article is missing,
// even when the target's last run did not try it. A disabled target's are
// not listed.
func TestHealthListsArticlesWaitingForARetry(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: "../../demo/config", Sim: sim.Options{Seed: 1}})
		const host, code = "www.lianzhou.gov.test", "lianzhou_tzgg"
		var article string
		for _, a := range w.Sim.Truth() {
			if a.TargetCode == code {
				article = a.URL
				break
			}
		}
		path := article[len("http://"+host):]
		if err := w.Sim.SetFault(host, sim.Fault{Kind: sim.Fault503, PathPrefix: path, Count: 1}); err != nil {
			t.Fatal(err)
		}
		tg := targetByCode(t, st, code)
		crawled := time.Now()
		w.Crawler(nil).Run(ctx, []model.Target{*tg})
		// A run right after leaves it waiting: its retry is minutes away.
		w.Crawler(nil).Run(ctx, []model.Target{*tg})

		rep, err := health.Check(ctx, st, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if rep.RetriesWaiting != 1 || len(rep.Retries) != 1 || rep.Retries[0].URL != article || rep.Retries[0].TargetCode != code {
			t.Fatalf("health lists %d waiting for a retry %+v, want %s of %s", rep.RetriesWaiting, rep.Retries, article, code)
		}
		next := rep.Retries[0].NextAttemptAt
		if next == nil || next.Before(crawled.Add(5*time.Minute)) || next.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("next attempt at %v, want 5 minutes after the 503", next)
		}
		if rep.Problems() == 0 {
			t.Error("health reports no problem while an article is missing")
		}
		if _, err := st.DB().ExecContext(ctx, `UPDATE crawl_target SET enabled = false WHERE target_code = '`+code+`'`); err != nil {
			t.Fatal(err)
		}
		if rep, err = health.Check(ctx, st, time.Now()); err != nil || rep.RetriesWaiting != 0 {
			t.Errorf("a disabled target's article is listed: %d (%v)", rep.RetriesWaiting, err)
		}
	})
}
