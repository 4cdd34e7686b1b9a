package queue

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// reloadWorld is the simulated web, a configuration directory of its own
// holding some of the bundled sites, a store synced with it, and the
// polite client and live configuration a serve process would build.
type reloadWorld struct {
	st     *store.Store
	sim    *sim.World
	dir    string
	rm     fetch.ResolveMap
	client *fetch.Client
	live   *configsync.Live
}

// addSite copies the bundled site file into the world's directory with
// edit applied to its text.
func (w *reloadWorld) addSite(t *testing.T, code string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundledConfig, config.SitesDir, code+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, config.SitesDir, code+".yaml"), []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func asBundled(s string) string { return s }

// owned marks the site as run here (the simulated web is on loopback),
// which lets its configuration turn robots.txt off.
func owned(s string) string { return strings.Replace(s, "\nowned: false\n", "\nowned: true\n", 1) }

// sync runs `config sync` on dir.
func (w *reloadWorld) sync(t *testing.T, dir string) {
	t.Helper()
	b, problems := config.LoadWith(dir, config.Options{Resolve: w.rm})
	if config.HasErrors(problems) {
		t.Fatalf("config %s: %v", dir, config.Errors(problems))
	}
	if _, err := configsync.Sync(context.Background(), w.st, b); err != nil {
		t.Fatal(err)
	}
}

// newReloadWorld starts with a configuration of the named sites only.
// With fast, every reload's site policies are loosened afterwards as the
// other crawl tests' client has them (no 2 s spacing; robots.txt, backoff
// and the breaker hold), so that crawls take seconds.
func newReloadWorld(t *testing.T, st *store.Store, fast bool, sites map[string]func(string) string) *reloadWorld {
	t.Helper()
	ctx := context.Background()
	sw, err := sim.Start(ctx, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	rm, err := fetch.ParseResolveMap(sw.ResolveString())
	if err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	w := &reloadWorld{st: st, sim: sw, rm: rm, dir: filepath.Join(t.TempDir(), "config")}
	for _, sub := range []string{config.CMSDir, config.SitesDir} {
		if err := os.MkdirAll(filepath.Join(w.dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(config.CMSDir, "gkmlpt.yaml"), config.DepartmentsFile, config.TopicsFile} {
		data, err := os.ReadFile(filepath.Join(bundledConfig, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for code, edit := range sites {
		w.addSite(t, code, edit)
	}
	f, err := os.Open(filepath.Join(w.dir, config.DepartmentsFile))
	if err != nil {
		t.Fatal(err)
	}
	depts, bad := config.ReadDepartmentsCSV(f, config.DepartmentsFile)
	f.Close()
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
		t.Fatal(err)
	}
	w.sync(t, w.dir)

	// What serve does at its start: the generation, then the files, then
	// the client with the sites' policies.
	gen, err := st.ConfigGeneration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, problems := config.LoadWith(w.dir, config.Options{Resolve: rm})
	if config.HasErrors(problems) {
		t.Fatal(config.Errors(problems))
	}
	w.client, err = fetch.NewClient(fetch.ClientOptions{Store: st, Resolve: rm, Version: "test",
		ContactURL: "https://zhizhi.example/contact", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.client.Close() })
	apply := func(ctx context.Context, nb *config.Bundle) error {
		if err := w.client.LoadSitePolicies(ctx, crawl.Resilience(nb)); err != nil {
			return err
		}
		if !fast {
			return nil
		}
		sites, err := st.ListSites(ctx)
		if err != nil {
			return err
		}
		for _, s := range sites {
			p := fetch.PolicyFor(s, crawltest.Resilience(nb, s))
			p.Owned, p.Interval, p.Burst = true, time.Millisecond, 1000
			w.client.SetSitePolicy(fetch.SiteHost(s), p)
		}
		return nil
	}
	if err := apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	w.live = configsync.NewLive(b, gen, configsync.LiveOptions{Dir: w.dir, Load: config.Options{Resolve: rm}, Store: st,
		Log: slog.New(slog.DiscardHandler), Apply: apply})
	return w
}

// waitIdle waits until no crawl or re-check job is queued, running or
// waiting, and every enabled target has been crawled. A job that failed
// (waiting for its retry) fails the test at once.
func waitIdle(t *testing.T, q *Queue, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Minute) // a safety net, not a measure
	for {
		jobs, err := q.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.LastError != "" {
				t.Fatalf("%s of %s failed: %s", j.Kind, j.TargetCode, j.LastError)
			}
		}
		targets, err := st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		crawled := true
		for _, tg := range targets {
			crawled = crawled && tg.LastCrawledAt != nil
		}
		if len(jobs) == 0 && crawled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d unfinished jobs: %+v", len(jobs), jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failedJobs lists the crawl jobs that recorded an error or did not
// complete.
func failedJobs(t *testing.T, q *Queue) []string {
	t.Helper()
	list, err := q.jobs.JobList(context.Background(), river.NewJobListParams().Kinds(KindCrawl, KindRecheck).
		States(rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded).First(10000))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range list.Jobs {
		if j.State != rivertype.JobStateCompleted || len(j.Errors) > 0 {
			out = append(out, string(j.State)+" "+string(j.EncodedArgs))
		}
	}
	return out
}

func truthOf(w *sim.World, sites ...string) []sim.TruthArticle {
	var out []sim.TruthArticle
	for _, a := range w.Truth() {
		for _, s := range sites {
			if a.SiteCode == s {
				out = append(out, a)
			}
		}
	}
	return out
}

// A queue started with a configuration lacking a site crawls that site
// once `config sync` has added it, without a restart, and stores what the
// site truly holds; a configuration broken after that leaves the queue
// working with the last good one.
func TestSyncedSiteCrawledWithoutRestart(t *testing.T) {
	storetest.ForEachDialectInParallel(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newReloadWorld(t, st, true, map[string]func(string) string{"gd_ref": asBundled})
		q, err := Open(ctx, Options{Store: st, Fetch: w.client, CurrentBundle: w.live.Current, Workers: 2,
			TickEvery: time.Hour, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(30 * time.Second)
		waitIdle(t, q, st) // the first tick (at start) queued gd_ref's targets

		// The operator adds a template site and an adapter site and syncs;
		// the running queue is not told.
		w.addSite(t, "lianzhou", asBundled)
		w.addSite(t, "qingcheng", asBundled)
		w.sync(t, w.dir)
		r, err := q.Scheduler().Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Crawls) != 8 {
			t.Fatalf("the tick after the sync queued %v, want the 4 targets of lianzhou and the 4 of qingcheng", r.Crawls)
		}
		waitIdle(t, q, st)
		if bad := failedJobs(t, q); len(bad) > 0 {
			t.Errorf("jobs that did not complete at once: %v", bad)
		}
		crawltest.Score(t, st, truthOf(w.sim, "gd_ref", "lianzhou", "qingcheng"), false).Assert(t)

		// Now a site file breaks on this machine, while a good copy is
		// synced from elsewhere: the next job checks, the reload fails, and
		// gd_ref goes on with the last good configuration.
		good := filepath.Join(t.TempDir(), "config")
		copyTree(t, w.dir, good)
		path := filepath.Join(w.dir, config.SitesDir, "gd_ref.yaml")
		if err := os.WriteFile(path, []byte("site_code: gd_ref\ntemplate: [\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		w.sync(t, good)
		tg, err := st.TargetByCode(ctx, "gd_ref_wjk")
		if err != nil {
			t.Fatal(err)
		}
		before := *tg.LastCrawledAt
		e, err := q.CrawlNow(ctx, *tg)
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, q, st)
		j, err := q.jobs.JobGet(ctx, e.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != rivertype.JobStateCompleted || len(j.Errors) > 0 {
			t.Errorf("crawl of gd_ref_wjk after the file broke: %s %v, want completed with the last good configuration", j.State, j.Errors)
		}
		if tg, _ = st.TargetByCode(ctx, "gd_ref_wjk"); !tg.LastCrawledAt.After(before) {
			t.Errorf("gd_ref_wjk was not crawled again (last %v)", tg.LastCrawledAt)
		}
		if f := w.live.Failure(); !strings.Contains(f, path+":") {
			t.Errorf("the failure %q does not name %s", f, path)
		}
	})
}

// A stricter politeness rule synced while the process runs applies to its
// next request: gd_ref, owned and with robots.txt off, is asked for a page
// its robots.txt forbids; after the sync that turns robots.txt on, the same
// request is refused without reaching the site.
func TestSyncedPolitenessAppliesToNextRequest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		robotsOff := func(s string) string {
			return strings.Replace(owned(s), "\nrespect_robots: true\n", "\nrespect_robots: false\n", 1)
		}
		w := newReloadWorld(t, st, false, map[string]func(string) string{"gd_ref": robotsOff})
		var forbidden string
		for _, a := range truthOf(w.sim, "gd_ref") {
			if a.RobotsDisallowed {
				forbidden = a.URL
				break
			}
		}
		if forbidden == "" {
			t.Fatal("the simulated gd_ref has no page its robots.txt forbids")
		}
		resp, err := w.client.Do(ctx, fetch.Request{URL: forbidden, Purpose: model.PurposeProbe})
		if err != nil || resp.Status != 200 {
			t.Fatalf("with robots.txt off, %s: %v %v", forbidden, resp, err)
		}

		w.addSite(t, "gd_ref", owned) // respect_robots: true, as bundled
		w.sync(t, w.dir)
		if err := w.live.Check(ctx); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(forbidden)
		if err != nil {
			t.Fatal(err)
		}
		fetched := func() int {
			n := 0
			for _, a := range w.sim.AccessLog(u.Host) {
				if a.Path == u.RequestURI() {
					n++
				}
			}
			return n
		}
		before := fetched()
		_, err = w.client.Do(ctx, fetch.Request{URL: forbidden, Purpose: model.PurposeProbe})
		var re *fetch.RobotsError
		if !errors.As(err, &re) {
			t.Fatalf("after the sync turned robots.txt on, %s: %v, want refused by robots.txt", forbidden, err)
		}
		if n := fetched(); n != before {
			t.Errorf("the forbidden page reached the site after the sync (%d requests, %d before)", n, before)
		}
	})
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
