package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// TestHealthCommand is `zhizhi health` on a world with stale columns and
// a broken host. The lianzhou site was crawled while the simulated web's
// clock stood 60 days back, so its columns' newest articles are 60 days
// old: more than 3 × their cadence of 3 to 14 days. The national reference
// site answers every request, robots.txt included, with a 503, and the
// news site shows a CAPTCHA; both are crawled with `zhizhi crawl`, which
// records each target's run. health lists all of it and exits 1; on an
// empty database it says all is well and exits 0; a wrong call exits 2.
func TestHealthCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and crawls the simulated web")
	}
	waitBound(t)
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "zhizhi.db")
	st, err := store.Open(ctx, dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig,
		Sim: sim.Options{Seed: 1, Now: time.Now().Add(-60 * 24 * time.Hour)}})
	lianzhou, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: "lianzhou", EnabledOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range w.Crawler(nil).Run(ctx, lianzhou) {
		if r.Err != nil || r.Failed > 0 {
			t.Fatalf("crawl of the healthy site: %s: %v, %d articles failed", r.TargetCode, r.Err, r.Failed)
		}
		if err := crawl.RecordRun(ctx, st, lianzhou[i], r, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sim.SetFault("www.gov.test", sim.Fault{Kind: sim.Fault503}); err != nil {
		t.Fatal(err)
	}
	if err := w.Sim.SetFault("www.news.test", sim.Fault{Kind: sim.FaultCaptcha, PathPrefix: "/news/"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_DATA_DIR=" + dir, "ZHIZHI_CONFIG_DIR=" + cfg,
		"ZHIZHI_RESOLVE=" + w.Sim.ResolveString(), "ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium")}
	for _, args := range [][]string{{"crawl", "--site", "gov_ref"}, {"crawl", "--target", "news_local"}} {
		if r := runZhizhi(t, env, args...); r.code != 1 {
			t.Fatalf("zhizhi %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}

	// Each target the crawl command ran has its run recorded.
	last, err := st.LastTargetRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"gov_ref_zuixin", "gov_ref_jiedu", "gov_ref_xxgk", "news_local"} {
		tg, err := st.TargetByCode(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		run, ok := last[tg.ID]
		if !ok || run.Runner != "cli" || run.Outcome != store.RunFailed || run.Error == "" || run.FinishedAt.Before(run.StartedAt) {
			t.Errorf("%s: last run %+v (recorded %v), want the crawl command's failed run with its error", code, run, ok)
		}
	}

	r := runZhizhi(t, env, "health")
	if r.code != 1 {
		t.Fatalf("health: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	row := lineWith(r.stdout, "lianzhou_zcwj")
	for _, want := range []string{"lianzhou", " 7 ", " 21"} {
		if !strings.Contains(row, want) {
			t.Errorf("stale row of lianzhou_zcwj lacks %q: %q\n%s", want, row, r.stdout)
		}
	}
	for _, want := range []string{"过期栏目", "上次运行失败", "gov_ref_zuixin", "news_local", "www.gov.test", "robots.txt 无法获取",
		"www.news.test", "验证码封禁", "需人工复核"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("health output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "www.lianzhou.gov.test") || strings.Contains(lineWith(r.stdout, "gd_ref_wjk"), "gd_ref_wjk") {
		t.Errorf("health lists the healthy host or a target added today:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "stale targets") {
		t.Errorf("stderr does not sum up what was found: %q", r.stderr)
	}

	r = runZhizhi(t, env, "health", "--json")
	if r.code != 1 {
		t.Fatalf("health --json: exit %d, want 1\n%s", r.code, r.stderr)
	}
	var rep struct {
		Stale []struct {
			TargetCode string `json:"target_code"`
			LimitDays  int    `json:"stale_after_days"`
		} `json:"stale_targets"`
		Failing []struct {
			TargetCode string `json:"target_code"`
			LastRun    struct {
				Outcome string `json:"outcome"`
				Runner  string `json:"runner"`
			} `json:"last_run"`
		} `json:"failing_targets"`
		Hosts []struct {
			Host  string   `json:"host"`
			Kinds []string `json:"kinds"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("health --json is not JSON: %v\n%s", err, r.stdout)
	}
	var stale []string
	for _, s := range rep.Stale {
		stale = append(stale, s.TargetCode)
		if s.TargetCode == "lianzhou_zcwj" && s.LimitDays != 21 {
			t.Errorf("lianzhou_zcwj is stale after %d days, want 21 (3 × 7)", s.LimitDays)
		}
	}
	if want := []string{"lianzhou_ghjh", "lianzhou_rsxx", "lianzhou_tzgg", "lianzhou_zcwj"}; !slices.Equal(stale, want) {
		t.Errorf("stale targets %v, want %v", stale, want)
	}
	if len(rep.Failing) != 4 || rep.Failing[0].LastRun.Runner != "cli" || rep.Failing[0].LastRun.Outcome != "failed" {
		t.Errorf("failing targets %+v, want the 4 the crawl command failed", rep.Failing)
	}
	kinds := map[string][]string{}
	for _, h := range rep.Hosts {
		kinds[h.Host] = h.Kinds
	}
	if !slices.Contains(kinds["www.gov.test"], "robots_unreachable") || !slices.Contains(kinds["www.news.test"], "captcha") || len(kinds) != 2 {
		t.Errorf("hosts %v, want www.gov.test robots_unreachable and www.news.test captcha", kinds)
	}

	empty := t.TempDir()
	if r := runZhizhi(t, []string{"ZHIZHI_DATA_DIR=" + empty}, "migrate"); r.code != 0 {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	r = runZhizhi(t, []string{"ZHIZHI_DATA_DIR=" + empty}, "health")
	if r.code != 0 || !strings.Contains(r.stdout, "一切正常") {
		t.Errorf("health on an empty database: exit %d, want 0 and all healthy\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"health", "now"}},
		{nil, []string{"health", "--jsn"}},
		{[]string{"ZHIZHI_DATABASE_URL=mysql://nowhere/db"}, []string{"health"}},
	} {
		r := runZhizhi(t, append([]string{"ZHIZHI_DATA_DIR=" + empty}, c.env...), c.args...)
		if r.code != 2 || r.stderr == "" {
			t.Errorf("zhizhi %v with %v: exit %d, stderr %q; want 2 and a message", c.args, c.env, r.code, r.stderr)
		}
	}
}
