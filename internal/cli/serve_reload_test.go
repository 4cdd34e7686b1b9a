package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configtest"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// reloadConfigDir makes a configuration directory with one site, switched off
// (configtest.OneQuietSite of the bundled configuration).
func reloadConfigDir(t *testing.T) string {
	t.Helper()
	return configtest.OneQuietSite(t, bundledConfig)
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls the serve's output until re matches after the first from
// bytes, and returns the output.
func (p *serveProc) waitFor(t *testing.T, from int, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a safety net, not a measure
	for {
		out := p.output()
		if re.MatchString(out[from:]) {
			return out
		}
		select {
		case err := <-p.done:
			p.done <- err // for stop
			t.Fatalf("serve exited (%v) before it logged %s:\n%s", err, re, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never logged %s:\n%s", re, out[from:])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitIdleServe waits until no crawl job is unfinished and every enabled
// target has been crawled since since; a job that failed fails the test
// at once.
func waitIdleServe(t *testing.T, sw *serveWorld, p *serveProc, since time.Time) {
	t.Helper()
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(5 * time.Minute) // a safety net, not a measure
	for {
		jobs, err := q.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.LastError != "" {
				t.Fatalf("%s of %s failed: %s\n%s", j.Kind, j.TargetCode, j.LastError, p.output())
			}
		}
		targets, err := sw.st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		done := len(jobs) == 0 && len(targets) > 0
		for _, tg := range targets {
			done = done && tg.LastCrawledAt != nil && tg.LastCrawledAt.After(since)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d unfinished jobs: %+v\n%s", len(jobs), jobs, p.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mustReadyz asks /readyz of a running serve and fails the test when
// nothing answers.
func mustReadyz(t *testing.T, p *serveProc) (int, string) {
	t.Helper()
	code, body, ok := readyz(p.addr)
	if !ok {
		t.Fatalf("/readyz of %s did not answer", p.addr)
	}
	return code, body
}

// TestServeReloadsSyncedConfig: a running `zhizhi serve` whose
// configuration lacks a site crawls it once `zhizhi config sync` has added
// it — no restart — and stores what the site holds. A site file broken
// after that (and a sync of good files from elsewhere) leaves serve working
// with the last good configuration, says so with the file and line in its
// log and /readyz; after the fix, SIGHUP reads the directory again.
func TestServeReloadsSyncedConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a simulated site at polite rates; skipped with -short")
	}
	waitBound(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			testServeReloadsSyncedConfig(t, dialect)
		})
	}
}

func testServeReloadsSyncedConfig(t *testing.T, dialect string) {
	data := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(data, "zhizhi.db")
	if dialect == store.DialectPostgres {
		dbURL = storetest.PostgresURL(t)
	}
	st, err := store.Open(context.Background(), dbURL, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := queue.Migrate(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	dir := reloadConfigDir(t)
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: dir, Sim: sim.Options{Seed: 1}})
	env := []string{
		"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_CONFIG_DIR=" + dir,
		"ZHIZHI_RESOLVE=" + w.Sim.ResolveString(), "TMPDIR=" + t.TempDir(), "ZHIZHI_LOG_LEVEL=info",
		"ZHIZHI_CHROMIUM=" + filepath.Join(data, "no-chromium"),
	}
	sw := &serveWorld{st: st, world: w, env: env, dataDir: data}
	p := sw.startServe(t, data, "--tick", "2s", "--workers", "2")

	// The operator adds a site and syncs; serve is not told.
	copyFile(t, filepath.Join(bundledConfig, config.SitesDir, "news.yaml"), filepath.Join(dir, config.SitesDir, "news.yaml"))
	start := time.Now()
	if r := runZhizhi(t, append(env, "ZHIZHI_DATA_DIR="+data), "config", "sync"); r.code != 0 {
		t.Fatalf("config sync exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	waitIdleServe(t, sw, p, start)
	if !strings.Contains(p.output(), "configuration reloaded") {
		t.Errorf("serve did not log the reload:\n%s", p.output())
	}
	var truth []sim.TruthArticle
	for _, a := range w.Sim.Truth() {
		if a.SiteCode == "news" {
			truth = append(truth, a)
		}
	}
	crawltest.Score(t, st, truth, false).Assert(t)

	// The site file breaks on this machine; good files are synced from
	// elsewhere.
	good := filepath.Join(t.TempDir(), "config")
	for _, f := range []string{filepath.Join(config.CMSDir, "gkmlpt.yaml"), config.DepartmentsFile, config.TopicsFile,
		filepath.Join(config.SitesDir, "gd_ref.yaml"), filepath.Join(config.SitesDir, "news.yaml")} {
		copyFile(t, filepath.Join(dir, f), filepath.Join(good, f))
	}
	path := filepath.Join(dir, config.SitesDir, "news.yaml")
	if err := os.WriteFile(path, []byte("site_code: news\ntemplate: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := len(p.output())
	if r := runZhizhi(t, append(env, "ZHIZHI_DATA_DIR="+data), "config", "sync", "--dir", good); r.code != 0 {
		t.Fatalf("config sync --dir %s exited %d: %s%s", good, r.code, r.stdout, r.stderr)
	}
	where := regexp.QuoteMeta(path) + `:\d+`
	p.waitFor(t, mark, regexp.MustCompile(`configuration reload failed.*`+where))
	if code, body := mustReadyz(t, p); code != 200 || !regexp.MustCompile(where).MatchString(body) {
		t.Errorf("/readyz answered %d %q, want 200 naming %s", code, body, path)
	}
	start = time.Now()
	// (asked from the machine with the good files: this one's no longer load)
	if r := runZhizhi(t, append(env, "ZHIZHI_DATA_DIR="+data, "ZHIZHI_CONFIG_DIR="+good), "crawl", "--enqueue", "--target", "news_local"); r.code != 0 {
		t.Fatalf("crawl --enqueue exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	waitIdleServe(t, sw, p, start) // with the last good configuration
	if n := strings.Count(p.output()[mark:], "configuration reload failed"); n != 1 {
		t.Errorf("%d warnings about the broken file, want 1:\n%s", n, p.output()[mark:])
	}

	// Fixed, and SIGHUP: read again at once.
	copyFile(t, filepath.Join(good, config.SitesDir, "news.yaml"), path)
	mark = len(p.output())
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, mark, regexp.MustCompile(`(?s)SIGHUP.*configuration reloaded`))
	if code, body := mustReadyz(t, p); code != 200 || strings.Contains(body, "configuration") {
		t.Errorf("/readyz after the fix answered %d %q, want 200 without a configuration problem", code, body)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM:\n%s", code, p.output())
	}
}
