package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
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
)

// What an operator relies on when running `zhizhi serve`, tested through
// the real binary against the simulated web at polite rates. Each test
// leaves only a few targets enabled so it runs in a minute or two.

// keepTargets disables every target but codes: nothing else is scheduled
// or crawled.
func keepTargets(t testing.TB, st *store.Store, codes ...string) {
	t.Helper()
	ctx := context.Background()
	quoted := make([]string, len(codes))
	for i, c := range codes {
		if _, err := st.TargetByCode(ctx, c); err != nil {
			t.Fatalf("target %s: %v", c, err)
		}
		quoted[i] = "'" + c + "'"
	}
	q := `UPDATE crawl_target SET enabled = false`
	if len(codes) > 0 {
		q += ` WHERE target_code NOT IN (` + strings.Join(quoted, ", ") + `)`
	}
	if _, err := st.DB().ExecContext(ctx, q); err != nil {
		t.Fatal(err)
	}
}

// truthOf is the simulation's truth for the given targets only.
func truthOf(w *sim.World, codes ...string) []sim.TruthArticle {
	var out []sim.TruthArticle
	for _, a := range w.Truth() {
		if slices.Contains(codes, a.TargetCode) {
			out = append(out, a)
		}
	}
	return out
}

// waitFor polls cond until it holds; limit is a safety net against a hung
// process, not a measure.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still waiting until %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jobsView reads the job queue of st, as any process on the database may.
func jobsView(t testing.TB, st *store.Store) *queue.Queue {
	t.Helper()
	q, err := queue.Open(context.Background(), queue.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return q
}

func listJobs(t testing.TB, q *queue.Queue, states ...rivertype.JobState) []queue.JobInfo {
	t.Helper()
	jobs, err := q.Jobs(context.Background(), states...)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// fetchedCount is how many of the target's articles are stored.
func fetchedCount(t testing.TB, st *store.Store, code string) int {
	t.Helper()
	ctx := context.Background()
	tg, err := st.TargetByCode(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := st.FrontierCounts(ctx, tg.ID)
	if err != nil {
		t.Fatal(err)
	}
	return counts[store.FrontierFetched]
}

// readyz asks /readyz; ok is false when nothing answered (the process is
// gone or no longer listens).
func readyz(addr string) (code int, body string, ok bool) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), true
}

// serveExit runs `zhizhi serve args…` that is expected to refuse to start,
// and returns its exit status and output. A serve that starts listening
// instead is stopped and fails the test.
func serveExit(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	p := spawnServe(t, env, args...)
	select {
	case err := <-p.done:
		return exitStatus(err), p.output()
	case addr := <-p.listening:
		p.kill()
		t.Fatalf("serve %v started and listened on %s; want it to refuse:\n%s", args, addr, p.output())
	case <-time.After(2 * time.Minute): // a safety net, not a measure
		p.kill()
		t.Fatalf("serve %v neither exited nor listened:\n%s", args, p.output())
	}
	return -1, ""
}

// TestServeStopsOnSIGTERM: SIGTERM while two crawls run, one of them
// waiting on a request that hangs. While it stops, /readyz answers 503 with
// the reason; it exits 0; no job is left running — the unfinished crawls
// are snoozed, not failed — and a restart finishes them: the stored
// articles of both targets equal the truth, and the sites saw no impolite
// request across the restart.
func TestServeStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates; skipped with -short")
	}
	waitBound(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			const (
				slow    = "lianzhou_tzgg" // 10 articles: still crawling at the signal
				hung    = "gd_ref_wjk"    // its request in flight at the signal never answers
				hungAt  = "www.gd.gov.test"
				timeout = 10 * time.Minute // safety net
			)
			sw := newServeWorld(t, dialect)
			keepTargets(t, sw.st, slow, hung)
			jobs := jobsView(t, sw.st)
			p := sw.startServe(t, sw.dataDir, "--workers", "2")
			if code, body, _ := readyz(p.addr); code != http.StatusOK {
				t.Fatalf("/readyz of a running serve: %d %q", code, body)
			}
			waitFor(t, timeout, "both targets have stored an article", func() bool {
				return fetchedCount(t, sw.st, slow) > 0 && fetchedCount(t, sw.st, hung) > 0
			})
			if err := sw.world.Sim.SetFault(hungAt, sim.Fault{Kind: sim.FaultHang, Count: 1}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, timeout, "a request hangs at "+hungAt, func() bool {
				return len(sw.world.Sim.Faults()[hungAt]) == 0 // the site took it: the request is hanging
			})
			running := listJobs(t, jobs, rivertype.JobStateRunning)
			if len(running) != 2 {
				t.Fatalf("at the signal, %d crawl jobs run (%+v); want both", len(running), running)
			}

			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			var stopping []string
			for {
				code, body, ok := readyz(p.addr)
				if !ok {
					break
				}
				if code != http.StatusOK {
					stopping = append(stopping, fmt.Sprintf("%d %s", code, body))
				} else if len(stopping) > 0 {
					t.Errorf("/readyz answered 200 again after %q while stopping", stopping)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// The hanging request holds the stop for its whole grace, so
			// /readyz had many chances to say so.
			if len(stopping) == 0 || !strings.HasPrefix(stopping[0], "503 ") || !strings.Contains(stopping[0], "stopping") {
				t.Errorf("/readyz while stopping answered %q, want 503 naming the stop", stopping)
			}
			select {
			case err := <-p.done:
				if code := exitStatus(err); code != 0 {
					t.Errorf("serve exited %d after SIGTERM, want 0:\n%s", code, p.output())
				}
			case <-time.After(2 * time.Minute): // a safety net, not a measure
				p.kill()
				t.Fatalf("serve still runs 2 minutes after SIGTERM:\n%s", p.output())
			}
			if err := p.cmd.Process.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("the serve process is still there after it exited: %v", err)
			}
			if !strings.Contains(p.output(), "已停止") {
				t.Errorf("serve said nothing of having stopped:\n%s", p.output())
			}

			left := listJobs(t, jobs, rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
				rivertype.JobStateScheduled, rivertype.JobStateRetryable)
			var hungLeft bool
			for _, j := range left {
				if j.State != rivertype.JobStateAvailable && j.State != rivertype.JobStateScheduled {
					t.Errorf("after the stop, the %s job of %s is %s (%s); want it queued to go on", j.Kind, j.TargetCode, j.State, j.LastError)
				}
				if j.LastError != "" {
					t.Errorf("after the stop, the %s job of %s carries the error %q; being stopped is no failure", j.Kind, j.TargetCode, j.LastError)
				}
				hungLeft = hungLeft || j.TargetCode == hung
			}
			if !hungLeft {
				t.Errorf("the crawl of %s, stopped with its request hanging, is not queued to go on: %+v", hung, left)
			}
			for _, j := range listJobs(t, jobs, rivertype.JobStateCancelled, rivertype.JobStateDiscarded) {
				t.Errorf("after the stop, the %s job of %s is %s: %s", j.Kind, j.TargetCode, j.State, j.LastError)
			}

			if t.Failed() {
				t.Fatalf("the stop went wrong; not restarting:\n%s", p.output())
			}
			sw.world.Sim.ClearFaults("")
			again := sw.startServe(t, sw.dataDir, "--workers", "2")
			sw.waitDone(t, timeout)
			if code := again.stop(t); code != 0 {
				t.Errorf("the restarted serve exited %d after SIGTERM:\n%s", code, again.output())
			}
			crawltest.Score(t, sw.st, truthOf(sw.world.Sim, slow, hung), sw.browser).Assert(t)
			if t.Failed() {
				t.Logf("the first serve's output:\n%s\nthe restarted one's:\n%s", p.output(), again.output())
			}
			checkPoliteFromSite(t, sw.world.Sim)
		})
	}
}

// tcpProxy stands between serve and PostgreSQL, so a test can take the
// database away for real (every connection cut, nothing listening) and
// give it back on the same address.
type tcpProxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func startProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: target, addr: ln.Addr().String(), ln: ln}
	go p.accept(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// cut closes the listener and every connection: the database is gone.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore listens again on the same address.
func (p *tcpProxy) restore() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.accept(ln)
}

// TestServeReadyzWhenDatabaseGone: serve on PostgreSQL answers /readyz 200;
// when the database goes away (its connections cut, nothing listening),
// 503 with the reason; when it is back, 200 again without a restart; then
// SIGTERM still ends it with 0.
func TestServeReadyzWhenDatabaseGone(t *testing.T) {
	waitBound(t)
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	sw := newServeWorld(t, store.DialectPostgres)
	keepTargets(t, sw.st) // nothing to crawl: this is about the database
	env := sw.serveEnv(sw.dataDir)
	var proxy *tcpProxy
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ZHIZHI_DATABASE_URL="); ok {
			u, err := url.Parse(v)
			if err != nil {
				t.Fatal(err)
			}
			proxy = startProxy(t, u.Host)
			u.Host = proxy.addr
			env[i] = "ZHIZHI_DATABASE_URL=" + u.String()
		}
	}
	p := spawnServe(t, env)
	select {
	case p.addr = <-p.listening:
	case err := <-p.done:
		t.Fatalf("serve exited before it listened: %v\n%s", err, p.output())
	case <-time.After(2 * time.Minute): // a safety net, not a measure
		p.kill()
		t.Fatalf("serve did not start:\n%s", p.output())
	}
	defer func() {
		if t.Failed() {
			t.Logf("serve's output:\n%s", p.output())
		}
	}()
	if code, body, _ := readyz(p.addr); code != http.StatusOK || body != "ready" {
		t.Fatalf("/readyz with the database there: %d %q, want 200 ready", code, body)
	}

	proxy.cut()
	var body string
	waitFor(t, time.Minute, "/readyz says the database is gone", func() bool {
		var code int
		code, body, _ = readyz(p.addr)
		return code == http.StatusServiceUnavailable
	})
	t.Logf("/readyz with the database gone: %q", body)
	if !strings.Contains(body, "database") {
		t.Errorf("/readyz with the database gone says %q; want the reason (the database)", body)
	}
	if code, hbody, _ := healthz(p.addr); code != http.StatusOK {
		t.Errorf("/healthz with the database gone: %d %q; the process itself is alive", code, hbody)
	}

	proxy.restore()
	waitFor(t, 2*time.Minute, "/readyz is 200 again once the database is back", func() bool {
		code, _, _ := readyz(p.addr)
		return code == http.StatusOK
	})
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM:\n%s", code, p.output())
	}
}

func healthz(addr string) (int, string, bool) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0, "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), true
}

// TestServeSecondProcess: on the embedded SQLite database a second serve
// refuses to start — exit 1, saying one is running and what to do — and
// once the first is gone (even killed) a new one starts; on PostgreSQL a
// second serve starts beside the first.
func TestServeSecondProcess(t *testing.T) {
	waitBound(t)
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Run(store.DialectSQLite, func(t *testing.T) {
		sw := newServeWorld(t, store.DialectSQLite)
		keepTargets(t, sw.st)
		first := sw.startServe(t, sw.dataDir)
		code, out := serveExit(t, sw.serveEnv(sw.dataDir))
		if code != 1 {
			t.Errorf("a second serve on the same SQLite database exited %d, want 1:\n%s", code, out)
		}
		if !strings.Contains(out, "already running") || !strings.Contains(out, filepath.Join(sw.dataDir, "zhizhi.db")) ||
			!strings.Contains(out, "PostgreSQL") {
			t.Errorf("a second serve on SQLite says %q; want that one is already running on which database, and that PostgreSQL runs several", out)
		}
		if code, body, _ := readyz(first.addr); code != http.StatusOK {
			t.Errorf("the first serve's /readyz after the second was refused: %d %q", code, body)
		}
		first.kill() // no cleanup: the lock must still go with the process
		third := sw.startServe(t, sw.dataDir)
		if code := third.stop(t); code != 0 {
			t.Errorf("serve exited %d after SIGTERM:\n%s", code, third.output())
		}
	})
	t.Run(store.DialectPostgres, func(t *testing.T) {
		sw := newServeWorld(t, store.DialectPostgres)
		keepTargets(t, sw.st)
		a := sw.startServe(t, filepath.Join(sw.dataDir, "worker-a"))
		b := sw.startServe(t, filepath.Join(sw.dataDir, "worker-b"))
		for name, p := range map[string]*serveProc{"first": a, "second": b} {
			if code, body, _ := readyz(p.addr); code != http.StatusOK {
				t.Errorf("the %s serve on PostgreSQL: /readyz %d %q", name, code, body)
			}
		}
		for name, p := range map[string]*serveProc{"first": a, "second": b} {
			if code := p.stop(t); code != 0 {
				t.Errorf("the %s serve exited %d after SIGTERM:\n%s", name, code, p.output())
			}
		}
	})
}

// TestCrawlEnqueueThroughBinary: `zhizhi crawl --enqueue --target X` exits
// 0 and names X in its table; a serve started afterwards with one worker
// starts X's crawl before the scheduled crawls that were queued before it,
// and crawls X completely. --enqueue with --full, and an unknown target,
// exit 2 and queue nothing.
func TestCrawlEnqueueThroughBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates; skipped with -short")
	}
	waitBound(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			const urgent = "gov_ref_xxgk"
			scheduled := []string{"yingde_ydjyj_3203", "qingcheng_qcfgw_2852", "lianzhou_rsxx"}
			sw := newServeWorld(t, dialect)
			keepTargets(t, sw.st, append([]string{urgent}, scheduled...)...)
			env := sw.serveEnv(sw.dataDir)
			jobs := jobsView(t, sw.st)
			// The scheduler queues every enabled target (none was crawled
			// yet), before anyone asks for the urgent one.
			tick, err := jobs.Scheduler().Tick(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(tick.Crawls) != 1+len(scheduled) {
				t.Fatalf("the scheduler queued %v, want all %d targets", tick.Crawls, 1+len(scheduled))
			}
			before := fmt.Sprint(listJobs(t, jobs))

			r := runZhizhi(t, env, "crawl", "--enqueue", "--full", "--target", urgent)
			if r.code != 2 || !strings.Contains(r.stderr, "--full") {
				t.Errorf("crawl --enqueue --full: exit %d, %q; want 2 naming --full", r.code, r.stderr)
			}
			r = runZhizhi(t, env, "crawl", "--enqueue", "--target", "no_such_target")
			if r.code != 2 || !strings.Contains(r.stderr, "no_such_target") {
				t.Errorf("crawl --enqueue of an unknown target: exit %d, %q; want 2 naming it", r.code, r.stderr)
			}
			if after := fmt.Sprint(listJobs(t, jobs)); after != before {
				t.Errorf("a refused crawl --enqueue changed the queue:\nbefore %s\nafter  %s", before, after)
			}

			r = runZhizhi(t, env, "crawl", "--enqueue", "--target", urgent)
			if r.code != 0 {
				t.Fatalf("crawl --enqueue --target %s: exit %d\n%s%s", urgent, r.code, r.stdout, r.stderr)
			}
			var urgentJob queue.JobInfo
			for _, j := range listJobs(t, jobs, rivertype.JobStateAvailable, rivertype.JobStateScheduled) {
				if j.TargetCode == urgent {
					urgentJob = j
				}
			}
			row := regexp.MustCompile(`(?m)^` + urgent + `\s+` + fmt.Sprint(urgentJob.ID) + `\s`)
			if urgentJob.ID == 0 || !row.MatchString(r.stdout) {
				t.Errorf("crawl --enqueue's table does not name %s with its queued job %d:\n%s", urgent, urgentJob.ID, r.stdout)
			}

			p := sw.startServe(t, sw.dataDir, "--workers", "1")
			attempted := func() []queue.JobInfo {
				var out []queue.JobInfo
				for _, j := range listJobs(t, jobs) {
					if j.AttemptedAt != nil && j.State != rivertype.JobStateCancelled {
						out = append(out, j)
					}
				}
				slices.SortFunc(out, func(a, b queue.JobInfo) int { return a.AttemptedAt.Compare(*b.AttemptedAt) })
				return out
			}
			waitFor(t, 5*time.Minute, "serve starts a crawl", func() bool { return len(attempted()) > 0 })
			if first := attempted()[0]; first.TargetCode != urgent {
				t.Errorf("serve started %s first (job %d, at %v), before the crawl asked for now (%s)",
					first.TargetCode, first.ID, first.AttemptedAt, urgent)
			}
			waitFor(t, 5*time.Minute, "the crawl of "+urgent+" is done", func() bool {
				for _, j := range listJobs(t, jobs, rivertype.JobStateCompleted) {
					if j.TargetCode == urgent {
						return true
					}
				}
				return false
			})
			for _, j := range attempted() {
				if j.TargetCode != urgent && j.AttemptedAt.Before(*attempted()[0].AttemptedAt) {
					t.Errorf("the scheduled crawl of %s started before the urgent one", j.TargetCode)
				}
			}
			if code := p.stop(t); code != 0 {
				t.Errorf("serve exited %d after SIGTERM:\n%s", code, p.output())
			}
			rep := crawltest.Score(t, sw.st, truthOf(sw.world.Sim, urgent), sw.browser)
			if rep.Expected == 0 || rep.Matched != rep.Expected {
				t.Errorf("%s: %d of its %d articles stored, missing e.g. %v", urgent, rep.Matched, rep.Expected, crawltest.First(rep.Missing, 3))
			}
		})
	}
}

// TestServeBadFlags: a time zone that does not exist and a worker count
// below one are usage errors (exit 2, naming the flag) that touch nothing;
// a --listen address already taken exits 1 saying which address and flag.
func TestServeBadFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	cfg, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{"ZHIZHI_DATA_DIR=" + dir, "ZHIZHI_CONFIG_DIR=" + cfg, "TMPDIR=" + t.TempDir(),
		"ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium")}
	untouched := func(what string) {
		t.Helper()
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("%s left %d entries in the data directory (e.g. %s); a usage error must write nothing", what, len(entries), entries[0].Name())
		}
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"--timezone", nil, []string{"--timezone", "Mars/Olympus"}, []string{"--timezone", "Mars/Olympus"}},
		{"ZHIZHI_TIMEZONE", []string{"ZHIZHI_TIMEZONE=Mars/Olympus"}, nil, []string{"ZHIZHI_TIMEZONE", "Mars/Olympus"}},
		{"--workers 0", nil, []string{"--workers", "0"}, []string{"--workers"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := serveExit(t, append(slices.Clone(env), c.env...), c.args...)
			if code != 2 {
				t.Errorf("serve %v: exit %d, want 2:\n%s", c.args, code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("serve %v says %q; want it to name %s", c.args, out, w)
				}
			}
			untouched("serve " + strings.Join(c.args, " "))
		})
	}
	t.Run("--listen in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addr := ln.Addr().String()
		code, out := serveExit(t, env, "--listen", addr)
		if code != 1 {
			t.Errorf("serve --listen %s (taken): exit %d, want 1:\n%s", addr, code, out)
		}
		if !strings.Contains(out, addr) || !strings.Contains(out, "--listen") || !strings.Contains(out, "in use") {
			t.Errorf("serve --listen on a taken address says %q; want the address, the flag and that it is in use", out)
		}
	})
}
