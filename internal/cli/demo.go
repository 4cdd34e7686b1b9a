package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/corpus"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

func init() { register(newDemoCmd) }

func newDemoCmd() *cobra.Command {
	var once, serve bool
	var seed int64
	cmd := &cobra.Command{
		Use:   "demo [--once | --serve]",
		Short: "Crawl the simulated government web end to end",
		Long: `Demo starts the simulated government web (see 'zhizhi sim'), imports its
departments, syncs its configuration into the demo's own database, and crawls
every target politely — the city portal through the headless-browser tier,
which passes its cookie challenge. It prints a summary. With --once it then
exits; otherwise the simulated web keeps running so you can explore it with
the other commands, until Ctrl-C. Run it again: the second crawl is
incremental.

The demo keeps everything in its own directory, ZHIZHI_DEMO_DIR (default
./data/demo): an SQLite database, blobs, the simulated web's configuration
(written there the first time from the copy built into the binary) and the
moment its clock started (the present, the first time). It never uses
ZHIZHI_DATA_DIR, ZHIZHI_DATABASE_URL or ZHIZHI_CONFIG_DIR, and it refuses
(exit 2, before any request) a site or target on a host the simulated web
does not serve. Delete the directory to start afresh. To look at the demo's
data with the other commands: ZHIZHI_DATA_DIR=./data/demo zhizhi health.

With --serve it crawls nothing itself: it starts the simulated web and
'zhizhi serve' on it (the admin console at http://ZHIZHI_LISTEN/admin/,
127.0.0.1:8080 by default), with an admin account "demo" whose password is
made the first time and kept in the demo's directory (demo-password.txt), and
prints both. Ctrl-C or SIGTERM stops it like serve. 'make demo' leaves it
running in the background; 'make demo-stop' stops it.

Ctrl-C (SIGINT) or SIGTERM during the crawl stops it as it stops 'zhizhi
crawl': no new work, up to 10 seconds for requests under way, the table so
far, the browser stopped.

` + crawlExitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if serve {
				if once {
					return exitCode(2, "demo: --once and --serve do not go together")
				}
				return runDemoServe(cmd, seed)
			}
			return runDemo(cmd, once, seed)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "exit after the crawl instead of keeping the simulated web running")
	cmd.Flags().BoolVar(&serve, "serve", false, "run the simulated web and the crawler service with its admin console, with a demo account")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the simulated web")
	return cmd
}

func runDemo(cmd *cobra.Command, once bool, seed int64) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	intr := watchInterrupt(cmd.Context(), errw)
	defer intr.Stop()
	ctx := intr.ctx

	dir, err := useDemoDir()
	if err != nil {
		return err
	}
	now, err := demoClock(dir)
	if err != nil {
		return err
	}
	// The simulated web outlives the crawl's context: requests abandoned
	// after an interrupt end on the crawler's side, not by the sites
	// vanishing under them. Its clock starts at the present moment the
	// first time the demo directory is used (kept there for later runs).
	w, err := sim.Start(cmd.Context(), sim.Options{Seed: seed, Now: now})
	if err != nil {
		return exitCode(1, "demo: start the simulated web: "+err.Error())
	}
	defer w.Close()
	settings.Resolve = w.ResolveString()
	fmt.Fprintf(out, "== 模拟政务网已启动 (simulated web): %d 个站点, 控制台 %s\n", len(w.Hosts())-1, w.ControlURL())

	st, err := createStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(out, "== 数据库 (database): %s %s\n", st.Dialect(), redactedDB())

	b, err := loadBundle()
	if err != nil {
		return err
	}
	known, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		return exitCode(1, err.Error())
	}
	if err := refuseForeignHosts(b, known, w); err != nil {
		return err
	}
	if err := importDepartments(ctx, st, filepath.Join(settings.ConfigDir, config.DepartmentsFile), out); err != nil {
		return err
	}
	rep, err := configsync.Sync(ctx, st, b)
	if err != nil {
		return exitCode(1, "demo: config sync: "+err.Error())
	}
	fmt.Fprintf(out, "== 配置同步 (config sync):\n%s\n", rep.String())

	targets, err := st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		return exitCode(1, err.Error())
	}
	if err := refuseForeignHosts(b, targets, w); err != nil {
		return err
	}
	var skipped []string
	if !chromiumAvailable() {
		targets, skipped = withoutBrowserTargets(ctx, st, targets)
		fmt.Fprintf(errw, "demo: Chromium is not installed at %s: skipping %d targets that need the browser tier: %v\n"+
			"      install it with `apt-get install chromium` (make demo does this when run as root)\n", settings.Chromium, len(skipped), skipped)
	}
	fmt.Fprintf(out, "== 开始采集 %d 个栏目 (crawl): 礼貌速率 — 每站同时仅 1 个请求，约每 2 秒 1 个\n", len(targets))
	results, err := runCrawl(cmd, intr, st, b, targets, false, out)
	if err != nil {
		return err
	}
	if intr.Interrupted() {
		return crawlStatus("demo", results, true)
	}
	if err := demoSummary(ctx, st, w, out); err != nil {
		return err
	}
	if err := demoCorpus(ctx, st, out, errw); err != nil {
		return err
	}
	fmt.Fprintf(out, `
== 接下来可以看 (what next):
  export ZHIZHI_DATA_DIR=%s   演示自己的数据目录 (the demo's own data dir)
  bin/zhizhi health               健康检查
  bin/zhizhi export --limit 3     RAG 增量导出 (JSON Lines)，下次的游标打印在 stderr
  bin/zhizhi target list          栏目、部门绑定与系统分配的调度时间
  bin/zhizhi search 医保           检索当前生效的语料库发布 (one- and two-character queries work)
  bin/zhizhi release list         语料库发布：构建、校验、生效、回滚 (docs/corpus.md)
  bin/zhizhi demo --once          再跑一次：增量采集，每个栏目只读列表第一页，未到复查时间的文章不再请求
`, settings.DataDir)
	if !once {
		fmt.Fprintf(out, `  curl %s/__sim/truth      模拟站点的“真值” (ground truth)
  curl '%s/__sim/log?host=www.qingyuan.gov.test'   站点一侧的访问日志 (politeness, seen by the site)
`, w.ControlURL(), w.ControlURL())
	}
	if err := crawlStatus("demo", results, false); err != nil || once {
		return err
	}
	fmt.Fprintf(out, "\n模拟政务网继续运行，按 Ctrl-C 停止。In another shell:\n  export ZHIZHI_RESOLVE=%s\n", w.ResolveString())
	// Stopping the simulated web is how this mode is meant to end: exit 0.
	<-intr.Drain
	return nil
}

func redactedDB() string {
	u := databaseURL()
	if len(u) > 11 && u[:11] == "postgres://" {
		return "postgres://…"
	}
	return u
}

// importDepartments loads the bundled department CSV when it exists.
func importDepartments(ctx context.Context, st *store.Store, path string, out io.Writer) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return exitCode(1, err.Error())
	}
	defer f.Close()
	depts, bad := config.ReadDepartmentsCSV(f, path)
	if len(bad) > 0 {
		msg := fmt.Sprintf("demo: %s has %d bad line(s); nothing imported:", path, len(bad))
		for _, e := range bad {
			msg += "\n  " + e.Error()
		}
		return exitCode(1, msg)
	}
	created, updated, err := st.ImportDepartments(ctx, depts)
	if err != nil {
		return exitCode(1, err.Error())
	}
	fmt.Fprintf(out, "== 本地部门 (departments): %d 个 (新增 %d, 更新 %d)\n", len(depts), created, updated)
	return nil
}

// withoutBrowserTargets drops the targets of browser-strategy sites.
func withoutBrowserTargets(ctx context.Context, st *store.Store, targets []model.Target) (kept []model.Target, skipped []string) {
	sites := map[int64]*model.Site{}
	for _, t := range targets {
		s := sites[t.SiteID]
		if s == nil {
			var err error
			if s, err = st.SiteByID(ctx, t.SiteID); err != nil {
				kept = append(kept, t)
				continue
			}
			sites[t.SiteID] = s
		}
		if s.DefaultFetchStrategy == model.StrategyBrowser {
			skipped = append(skipped, t.TargetCode)
			continue
		}
		kept = append(kept, t)
	}
	return kept, skipped
}

// demoSummary prints what the database now holds, per site, next to what
// the simulated web really publishes.
func demoSummary(ctx context.Context, st *store.Store, w *sim.World, out io.Writer) error {
	truth := map[string]int{}
	for _, a := range w.Truth() {
		if !a.RobotsDisallowed && a.TargetCode != "" {
			truth[a.SiteCode]++
		}
	}
	counts, err := st.ArticleCounts(ctx)
	if err != nil {
		return exitCode(1, err.Error())
	}
	codes := make([]string, 0, len(truth))
	for c := range truth {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	fmt.Fprintln(out, "\n== 入库结果 (stored vs. published):")
	for _, c := range codes {
		n := counts[c]
		fmt.Fprintf(out, "  %-10s ready %3d · failed %2d · 站点实际发布 %3d\n", c, n.Ready, n.Failed, truth[c])
	}
	grades, err := st.CardGrades(ctx)
	if err != nil {
		return exitCode(1, err.Error())
	}
	fmt.Fprintf(out, "== 摘要卡 (summary cards): 🟢 可展示 %d · 🟡 待人工改写 %d · 🔴 仅标题与链接 %d\n",
		grades[model.GradeGreen], grades[model.GradeYellow], grades[model.GradeRed])
	return nil
}

// demoCorpus takes the demo's articles into the corpus by a standing rule
// (made once, as an operator would) and, when that changed anything,
// builds, verifies and activates a release, so that search, citations and
// the MCP server have something to answer from.
func demoCorpus(ctx context.Context, st *store.Store, out, errw io.Writer) error {
	svc := corpusService(st)
	rules, err := st.CorpusIntakeRules(ctx)
	if err != nil {
		return exitCode(1, "demo: corpus: "+err.Error())
	}
	if len(rules) == 0 {
		r := &store.CorpusIntakeRule{Name: "演示：全部全文站点", Enabled: true, CreatedBy: "demo"}
		if err := st.CreateCorpusIntakeRule(ctx, r); err != nil {
			return exitCode(1, "demo: corpus: "+err.Error())
		}
	}
	sum, err := svc.RunRules(ctx, nil)
	if err != nil {
		return exitCode(1, "demo: corpus intake: "+err.Error())
	}
	fmt.Fprintf(out, "== 语料库收录 (corpus intake): %d 篇新作品, %d 个新修订, %d 篇未变, %d 个重复候选待人工判定\n",
		sum.NewWorks, sum.NewRevisions, sum.Unchanged, sum.Candidates)
	for _, f := range sum.Failures {
		fmt.Fprintf(errw, "  article %d: %s\n", f.ArticleID, f.Error)
	}
	if len(sum.Failures) > 0 {
		return exitCode(1, fmt.Sprintf("demo: corpus intake: %d articles could not be taken in", len(sum.Failures)))
	}
	if _, err := svc.Active(ctx); err == nil && sum.NewWorks+sum.NewRevisions == 0 {
		return nil // the active release holds all of it already
	}
	b, err := svc.Build(ctx, "demo", nil)
	if err != nil {
		return exitCode(1, "demo: release build: "+err.Error())
	}
	if err := svc.Verify(ctx, b.Version, "demo", corpus.VerifyOptions{}, nil); err != nil {
		return exitCode(1, "demo: release verify: "+err.Error())
	}
	if _, err := svc.Activate(ctx, b.Version, "demo"); err != nil {
		return exitCode(1, "demo: release activate: "+err.Error())
	}
	fmt.Fprintf(out, "== 语料库发布 (corpus release): %s 已校验并生效, %d 篇作品, %d 篇暂缓 (原因见控制台或 zhizhi corpus works)\n",
		b.Version, b.Works, b.Held)
	return nil
}
