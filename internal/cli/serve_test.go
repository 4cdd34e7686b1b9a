package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// serveWorld is the simulated web and a database synced with the bundled
// config, ready for `zhizhi serve` processes.
type serveWorld struct {
	st      *store.Store
	world   *crawltest.World
	env     []string
	browser bool
	dataDir string
}

// newServeWorld opens a fresh database of the dialect ("sqlite" or
// "postgres") and syncs the bundled config into it.
func newServeWorld(t *testing.T, dialect string) *serveWorld {
	t.Helper()
	return newServeWorldOn(t, dialect, "")
}

// newServeWorldOn is newServeWorld on the PostgreSQL server at pgBase (a
// test's own); "" is the shared test server.
func newServeWorldOn(t *testing.T, dialect, pgBase string) *serveWorld {
	t.Helper()
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "zhizhi.db")
	switch {
	case dialect == store.DialectPostgres && pgBase != "":
		dbURL = storetest.PostgresURLOn(t, pgBase)
	case dialect == store.DialectPostgres:
		dbURL = storetest.PostgresURL(t)
	}
	st, err := store.Open(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := queue.Migrate(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig, Sim: sim.Options{Seed: 1}})
	cfg, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	browser := crawltest.Chromium(t)
	tmp, err := os.MkdirTemp("", "zhizhi-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env := []string{
		"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_CONFIG_DIR=" + cfg,
		"ZHIZHI_RESOLVE=" + w.Sim.ResolveString(), "TMPDIR=" + tmp, "ZHIZHI_LOG_LEVEL=info",
	}
	if !browser {
		env = append(env, "ZHIZHI_CHROMIUM="+filepath.Join(dir, "no-chromium"))
	}
	return &serveWorld{st: st, world: w, env: env, browser: browser, dataDir: dir}
}

// serveProc is one running `zhizhi serve`.
type serveProc struct {
	cmd  *exec.Cmd
	addr string
	done chan error
	// listening receives the address once the process says it listens.
	listening chan string
	mu        sync.Mutex
	out       strings.Builder
}

var serveStarted = regexp.MustCompile(`已启动 — http://(\S+)`)

// serveEnv is the environment of a serve process of this world with its
// own data directory (workers share nothing but the database).
// zhizhi runs the binary with args against the world's database, stdin
// fed from stdin, and returns its output; a failure fails the test.
func (sw *serveWorld) zhizhi(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(zhizhiBinary(t), args...)
	cmd.Env = sw.serveEnv(sw.dataDir)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zhizhi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (sw *serveWorld) serveEnv(dataDir string) []string {
	return append(slices.Clone(sw.env), "ZHIZHI_DATA_DIR="+dataDir)
}

// startServe starts `zhizhi serve` with its own data directory and waits
// until it listens.
func (sw *serveWorld) startServe(t testing.TB, dataDir string, args ...string) *serveProc {
	t.Helper()
	p := spawnServe(t, sw.serveEnv(dataDir), args...)
	select {
	case p.addr = <-p.listening:
	case err := <-p.done:
		t.Fatalf("serve exited before it listened: %v\n%s", err, p.output())
	case <-time.After(2 * time.Minute): // a safety net, not a measure
		p.cmd.Process.Kill()
		t.Fatalf("serve did not start:\n%s", p.output())
	}
	return p
}

// spawnServe starts `zhizhi serve --listen 127.0.0.1:0 args…` with env
// (and no ZHIZHI_ variable or TMPDIR of the test's own) and returns at
// once; p.listening says when it listens, p.done when it exits.
func spawnServe(t testing.TB, env []string, args ...string) *serveProc {
	t.Helper()
	return spawnZhizhi(t, env, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
}

// spawnDemoServe starts `zhizhi demo --serve` like spawnServe.
func spawnDemoServe(t testing.TB, env []string) *serveProc {
	t.Helper()
	return spawnZhizhi(t, env, "demo", "--serve")
}

// spawnZhizhi starts zhizhi with args, for a command that serves HTTP.
func spawnZhizhi(t testing.TB, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(zhizhiBinary(t), args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "ZHIZHI_") || strings.HasPrefix(kv, "TMPDIR=")
	}), env...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &serveProc{cmd: cmd, done: make(chan error, 1), listening: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			p.mu.Unlock()
			if m := serveStarted.FindStringSubmatch(line); m != nil {
				p.listening <- m[1]
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	return p
}

func (p *serveProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kill ends the process with SIGKILL: no cleanup of any kind.
func (p *serveProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and returns the exit status.
func (p *serveProc) stop(t testing.TB) int {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return exitStatus(err)
	case <-time.After(2 * time.Minute): // a safety net, not a measure
		p.cmd.Process.Kill()
		t.Fatalf("serve did not stop within 2 minutes of SIGTERM:\n%s", p.output())
		return -1
	}
}

// waitDone waits until every target the test crawls has been crawled and
// no crawl or re-check job is queued, running or waiting: the queue has
// nothing more to do.
func (sw *serveWorld) waitDone(t testing.TB, limit time.Duration) {
	t.Helper()
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(limit) // a safety net, not a measure
	var jobs []queue.JobInfo
	for {
		jobs, err = q.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 && sw.allCrawled(t) {
			return
		}
		// A crawl given up for good leaves its target uncrawled: say so
		// now rather than at the safety net.
		if gone, err := q.Jobs(ctx, rivertype.JobStateDiscarded); err != nil {
			t.Fatal(err)
		} else if len(gone) > 0 {
			for _, j := range gone {
				t.Errorf("crawl of %s given up after %d attempts: %s", j.TargetCode, j.Attempt, j.LastError)
			}
			t.FailNow()
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, j := range jobs {
				fmt.Fprintf(&b, "\n  %s %s %s attempt %d scheduled %s by %v: %s", j.Kind, j.TargetCode, j.State, j.Attempt,
					j.ScheduledAt.Format(time.TimeOnly), j.AttemptedBy, j.LastError)
			}
			t.Fatalf("after %v, %d jobs are still unfinished:%s", limit, len(jobs), b.String())
		}
		time.Sleep(time.Second)
	}
}

// allCrawled reports whether every enabled target (but the browser sites'
// when there is no browser) has been crawled at least once.
func (sw *serveWorld) allCrawled(t testing.TB) bool {
	ctx := context.Background()
	targets, err := sw.st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.browser {
		targets, _ = withoutBrowserTargets(ctx, sw.st, targets)
	}
	for _, tg := range targets {
		if tg.LastCrawledAt == nil {
			return false
		}
	}
	return true
}

// checkPoliteFromSite reads the simulated web's own access log: never two
// requests in flight at one host, and at every host, any run of n
// requests spanning d keeps to the token bucket (burst 3, one per 2 s):
// n ≤ 3 + d/2s. Arrival times are taken at the site, so a run may look up
// to slack shorter than the client kept it.
func checkPoliteFromSite(t *testing.T, w *sim.World) (requests int) {
	t.Helper()
	const slack = 50 * time.Millisecond
	for _, h := range w.Hosts() {
		log := w.AccessLog(h)
		requests += len(log)
		for i, a := range log {
			if a.InFlightAtArrival != 0 {
				t.Errorf("%s: %s %s arrived with %d other requests in flight at the host", h, a.Method, a.Path, a.InFlightAtArrival)
			}
			for j := i + 3; j < len(log); j++ {
				n := j - i + 1
				span := log[j].Arrived.Sub(a.Arrived) + slack
				if allowed := 3 + int(span/(2*time.Second)); n > allowed {
					var window strings.Builder
					for _, r := range log[i : j+1] {
						fmt.Fprintf(&window, "\n\t%s→%s %d %s %s (%s)", r.Arrived.Format("15:04:05.000"),
							r.Finished.Format("15:04:05.000"), r.Status, r.Method, r.Path, r.UserAgent)
					}
					t.Errorf("%s: %d requests within %v, the bucket allows %d:%s", h, n, span-slack, allowed, window.String())
					break
				}
			}
		}
	}
	return requests
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeTwoWorkersShareTheWork: two `zhizhi serve` processes on one
// PostgreSQL database, each with its own data directory, crawl the
// simulated web at polite rates. The site's own access log shows never two
// requests in flight at a host and the token bucket kept across both
// processes; the stored articles equal the truth; both processes worked.
func TestServeTwoWorkersShareTheWork(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates (minutes); skipped with -short")
	}
	waitBound(t)
	sw := newServeWorld(t, store.DialectPostgres)
	a := sw.startServe(t, filepath.Join(sw.dataDir, "worker-a"), "--workers", "3")
	b := sw.startServe(t, filepath.Join(sw.dataDir, "worker-b"), "--workers", "3")
	for _, p := range []*serveProc{a, b} {
		if code := getStatus(t, "http://"+p.addr+"/healthz"); code != 200 {
			t.Errorf("/healthz answered %d", code)
		}
		if code := getStatus(t, "http://"+p.addr+"/readyz"); code != 200 {
			t.Errorf("/readyz answered %d", code)
		}
	}
	sw.waitDone(t, 15*time.Minute)
	for name, p := range map[string]*serveProc{"a": a, "b": b} {
		if code := p.stop(t); code != 0 {
			t.Errorf("worker %s exited %d after SIGTERM:\n%s", name, code, p.output())
		}
	}
	crawltest.Score(t, sw.st, sw.world.Sim.Truth(), sw.browser).Assert(t)
	n := checkPoliteFromSite(t, sw.world.Sim)
	q, err := queue.Open(context.Background(), queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	byWorker, err := q.AttemptsByWorker(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(byWorker) != 2 {
		t.Errorf("jobs were worked by %v, want both workers", byWorker)
	}
	t.Logf("%d requests seen by the sites; jobs per worker %v", n, byWorker)
}

// TestServeSurvivesKills: `zhizhi serve` is killed with SIGKILL at ten
// random moments while its scheduled crawls run — on SQLite the one
// process, on PostgreSQL one of two — and started again. In the end the
// stored articles equal the truth with no duplicates, no job is left
// queued or running (the dead workers' jobs were taken back), and the sites
// saw no impolite request, all while every CPU is kept busy.
func TestServeSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates (minutes); skipped with -short")
	}
	waitBound(t)
	busyCPUs(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			const kills = 10
			sw := newServeWorld(t, dialect)
			// A short budget, so that jobs are continued often.
			args := []string{"--job-budget", "20s", "--workers", "3"}
			dirs := []string{filepath.Join(sw.dataDir, "worker-a"), filepath.Join(sw.dataDir, "worker-b")}
			if dialect == store.DialectSQLite {
				dirs = []string{sw.dataDir, sw.dataDir} // one process at a time, one data directory
			}
			procs := []*serveProc{sw.startServe(t, dirs[0], args...)}
			if dialect == store.DialectPostgres {
				procs = append(procs, sw.startServe(t, dirs[1], args...))
			}
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
			for k := 0; k < kills; k++ {
				time.Sleep(time.Duration(1000+rng.IntN(9000)) * time.Millisecond)
				i := k % len(procs)
				procs[i].kill()
				t.Logf("kill %d: worker %d", k+1, i)
				procs[i] = sw.startServe(t, dirs[i], args...)
			}
			sw.waitDone(t, 20*time.Minute)
			for i, p := range procs {
				if code := p.stop(t); code != 0 {
					t.Errorf("worker %d exited %d after SIGTERM:\n%s", i, code, p.output())
				}
			}
			crawltest.Score(t, sw.st, sw.world.Sim.Truth(), sw.browser).Assert(t)
			checkPoliteFromSite(t, sw.world.Sim)
			// No list walk left open: every target's last walk was closed.
			targets, err := sw.st.ListTargets(context.Background(), store.TargetFilter{EnabledOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range targets {
				walks, err := sw.st.LastWalks(context.Background(), tg.ID, 1)
				if err != nil {
					t.Fatal(err)
				}
				// Finished, or stopped with a reason (robots.txt forbids the
				// column): a walk a killed process left has neither.
				if len(walks) == 1 && walks[0].FinishedAt == nil && walks[0].Error == "" {
					t.Errorf("target %s: its last list walk was left open (%+v)", tg.TargetCode, walks[0])
				}
			}
		})
	}
}

// TestServeTakesBackAfterKillOnSQLite: on SQLite a serve killed with
// SIGKILL leaves its crawls "running"; the next serve — the only one the
// database allows — takes them back as it starts, instead of waiting for
// River's rescuer (20 minutes and more with the default budget), and
// they finish.
func TestServeTakesBackAfterKillOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates; skipped with -short")
	}
	waitBound(t)
	sw := newServeWorld(t, store.DialectSQLite)
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	first := sw.startServe(t, sw.dataDir, "--workers", "2")
	var running []queue.JobInfo
	for deadline := time.Now().Add(5 * time.Minute); len(running) == 0; { // a safety net, not a measure
		if running, err = q.Jobs(ctx, rivertype.JobStateRunning); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no crawl job started")
		}
		time.Sleep(200 * time.Millisecond)
	}
	first.kill()
	second := sw.startServe(t, sw.dataDir, "--workers", "2")
	if !strings.Contains(second.output(), "接管") {
		t.Errorf("the new serve does not say it took back the dead one's jobs:\n%s", second.output())
	}
	// Each job the dead process held is attempted again by the new one
	// long before River's rescuer would look (20 min 40 s with the
	// default budget).
	for deadline := time.Now().Add(5 * time.Minute); ; {
		left := 0
		for _, j := range running {
			got, err := q.Jobs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				if g.ID == j.ID && len(g.AttemptedBy) < 2 {
					left++
				}
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs of the killed serve were not taken back within 5 minutes", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := second.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM:\n%s", code, second.output())
	}
}
