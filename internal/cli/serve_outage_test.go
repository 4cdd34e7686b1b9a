package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// freePort is a loopback port nothing listens on now, for this test's own
// PostgreSQL cluster (the shared test server is never stopped).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pgCluster is a throwaway PostgreSQL cluster the test may stop and start.
type pgCluster struct {
	bin, dir string
	asUser   []string // runuser -u postgres -- when running as root
}

// newPGCluster initialises and starts a cluster on port, stopped and
// removed when the test ends. Without PostgreSQL's binaries the test is
// skipped, and fails under CI=true.
func newPGCluster(t *testing.T, port int) *pgCluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("POSTGRESQL TESTS CANNOT RUN: no /usr/lib/postgresql/*/bin/initdb and CI=true requires them; run make test")
		}
		t.Skip("POSTGRESQL TESTS SKIPPED: no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")
	}
	sort.Slice(bins, func(i, j int) bool { return pgMajor(bins[i]) < pgMajor(bins[j]) })
	c := &pgCluster{bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("", "zhizhi-outage-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		// The server refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root and there is no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	c.run(t, "initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8")
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nmax_connections = 200\n", port, dir)
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.start(t)
	t.Cleanup(func() {
		// Still running unless the test ended during the outage.
		argv := append(append([]string(nil), c.asUser...), filepath.Join(c.bin, "pg_ctl"), "-D", c.data(), "-m", "immediate", "-w", "stop")
		_ = exec.Command(argv[0], argv[1:]...).Run()
	})
	return c
}

func pgMajor(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

func (c *pgCluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	argv := append(append(append([]string(nil), c.asUser...), filepath.Join(c.bin, prog)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

func (c *pgCluster) pgctl(t *testing.T, args ...string) {
	t.Helper()
	c.run(t, "pg_ctl", append([]string{"-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w"}, args...)...)
}

func (c *pgCluster) start(t *testing.T) { c.pgctl(t, "start") }

// stop shuts the server down the way an operator's restart does: open
// connections are ended (57P01), then it refuses new ones.
func (c *pgCluster) stop(t *testing.T) { c.pgctl(t, "-m", "fast", "stop") }

// TestServeWaitsOutADatabaseOutage: `zhizhi serve` on PostgreSQL crawls
// the simulated web; while crawls are in flight the database is stopped
// for 10 seconds and started again. A database error is not the sites'
// failure: every crawl that was in flight finishes within a minute of the
// database's return and its run is recorded (none recorded as failed for
// the database), no job is failed onto the back-off meant for failing
// sites, a host whose crawl had work is asked again within a minute, the
// stored articles equal the truth with no duplicates, and the sites' own
// access logs show no impolite request.
func TestServeWaitsOutADatabaseOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates (minutes); skipped with -short")
	}
	waitBound(t)
	busyCPUs(t)
	port := freePort(t)
	pg := newPGCluster(t, port)
	sw := newServeWorldOn(t, store.DialectPostgres, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	hostOf := targetHosts(t, sw.st)
	// Workers for every host at once, so that a crawl that pauses is not
	// queued behind others; a budget short enough that the crawls in
	// flight end soon after the outage.
	p := sw.startServe(t, filepath.Join(sw.dataDir, "worker"), "--workers", "8", "--job-budget", "40s")

	// In flight: crawl jobs under way for a while (not one that only
	// looks whether its host is free), each on a host answering requests;
	// one per host, the one that holds it.
	var inFlight []queue.JobInfo
	for deadline := time.Now().Add(10 * time.Minute); ; { // a safety net, not a measure
		running, err := q.Jobs(ctx, rivertype.JobStateRunning)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(running, func(i, j int) bool { return running[i].AttemptedAt.Before(*running[j].AttemptedAt) })
		inFlight = inFlight[:0]
		hosts := map[string]bool{}
		for _, j := range running {
			host := hostOf[j.TargetCode]
			if j.Kind == queue.KindCrawl && !hosts[host] && time.Since(*j.AttemptedAt) > 3*time.Second &&
				recentRequest(sw, host, 5*time.Second) {
				hosts[host] = true
				inFlight = append(inFlight, j)
			}
		}
		if len(inFlight) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two crawls were in flight within 10 minutes:\n%s", p.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	stoppedAt := time.Now()
	pg.stop(t)
	t.Logf("database stopped with %d crawls in flight: %v", len(inFlight), jobTargets(inFlight))
	time.Sleep(10 * time.Second) // the outage itself
	pg.start(t)
	backAt := time.Now()
	t.Logf("database back after %s", backAt.Sub(stoppedAt).Round(time.Millisecond))

	// Every crawl in flight finishes, and is recorded as a run, within a
	// minute of the database's return.
	runs := map[string]store.TargetRun{}
	for _, j := range inFlight {
		tg, err := sw.st.TargetByCode(ctx, j.TargetCode)
		if err != nil {
			t.Fatal(err)
		}
		for deadline := backAt.Add(5 * time.Minute); ; { // a safety net; the bound is checked below
			if r, ok := runOfAttempt(t, sw.st, tg.ID, *j.AttemptedAt, stoppedAt); ok {
				runs[j.TargetCode] = r
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the crawl of %s in flight when the database stopped has no run recorded 5 minutes after it came back:\n%s",
					j.TargetCode, p.output())
			}
			time.Sleep(time.Second)
		}
		r := runs[j.TargetCode]
		if late := r.FinishedAt.Sub(backAt); late > time.Minute {
			t.Errorf("the crawl of %s in flight when the database stopped finished %s after it came back, later than a minute", j.TargetCode, late.Round(time.Second))
		}
		t.Logf("%s: run %s, finished %s after the database came back", j.TargetCode, r.Outcome, r.FinishedAt.Sub(backAt).Round(time.Millisecond))
	}
	// A crawl that had work when the database came back goes on at once:
	// its host is asked again within a minute, not after a back-off. Work
	// left means it paused (its budget, or the wait), or it went on for
	// more than a few seconds after the return (storing alone takes
	// milliseconds).
	for code, r := range runs {
		if r.Outcome != store.RunInterrupted && r.FinishedAt.Sub(backAt) < 5*time.Second {
			continue
		}
		host := hostOf[code]
		for deadline := backAt.Add(5 * time.Minute); ; { // a safety net; the bound is checked below
			if first, ok := firstRequestAfter(sw, host, backAt); ok {
				if gap := first.Sub(backAt); gap > time.Minute {
					t.Errorf("%s (%s) had work at the outage and got its next request %s after the database came back, later than a minute",
						host, code, gap.Round(time.Second))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s (%s) had work at the outage and got no request in the 5 minutes after the database came back", host, code)
				break
			}
			time.Sleep(time.Second)
		}
	}

	sw.waitDone(t, 20*time.Minute)
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM:\n%s", code, p.output())
	}
	// The outage failed no attempt: no crawl or re-check job has an error
	// from it (a failed attempt waits 5 minutes and more).
	rows, err := sw.st.DB().QueryContext(ctx, `SELECT id, args->>'target_id', array_to_json(errors)::text FROM river_job
		WHERE kind IN ('crawl', 'recheck') AND errors IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var target string
		var raw string
		if err := rows.Scan(&id, &target, &raw); err != nil {
			t.Fatal(err)
		}
		var errs []struct {
			At    time.Time `json:"at"`
			Error string    `json:"error"`
		}
		if err := json.Unmarshal([]byte(raw), &errs); err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			if !e.At.Before(stoppedAt) {
				t.Errorf("job %d (target %s) failed an attempt at %s: %s", id, target, e.At.Format(time.TimeOnly), e.Error)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	// No run was recorded as failed because of the database.
	targets, err := sw.st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		trs, err := sw.st.TargetRuns(ctx, tg.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range trs {
			if r.Outcome == store.RunFailed && mentionsDatabase(r.Error) {
				t.Errorf("target %s: a run was recorded as failed for the database: %s", tg.TargetCode, r.Error)
			}
		}
	}
	crawltest.Score(t, sw.st, sw.world.Sim.Truth(), sw.browser).Assert(t)
	n := checkPoliteFromSite(t, sw.world.Sim)
	if !strings.Contains(p.output(), "the database does not answer") {
		t.Errorf("serve never said it waited for the database:\n%s", p.output())
	}
	t.Logf("%d requests seen by the sites", n)
}

// targetHosts maps every target's code to its site's host.
func targetHosts(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	targets, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tg := range targets {
		site, err := st.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		out[tg.TargetCode] = fetch.SiteHost(*site)
	}
	return out
}

// recentRequest reports whether host's access log has a request that
// arrived within d.
func recentRequest(sw *serveWorld, host string, d time.Duration) bool {
	log := sw.world.Sim.AccessLog(host)
	return len(log) > 0 && time.Since(log[len(log)-1].Arrived) < d
}

// firstRequestAfter is the arrival of host's first request after since.
func firstRequestAfter(sw *serveWorld, host string, since time.Time) (time.Time, bool) {
	for _, a := range sw.world.Sim.AccessLog(host) {
		if a.Arrived.After(since) {
			return a.Arrived, true
		}
	}
	return time.Time{}, false
}

// runOfAttempt finds the recorded run of the job attempt that began at
// attempted and was under way at stopped.
func runOfAttempt(t *testing.T, st *store.Store, targetID int64, attempted, stopped time.Time) (store.TargetRun, bool) {
	t.Helper()
	trs, err := st.TargetRuns(context.Background(), targetID, 1000)
	if err != nil {
		return store.TargetRun{}, false // the pool may still be reconnecting
	}
	for _, r := range trs {
		if !r.StartedAt.Before(attempted.Add(-time.Second)) && r.StartedAt.Before(stopped) {
			return r, true
		}
	}
	return store.TargetRun{}, false
}

func jobTargets(jobs []queue.JobInfo) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.TargetCode)
	}
	return out
}

// mentionsDatabase reports whether a run's error is the database's.
func mentionsDatabase(s string) bool {
	for _, w := range []string{"SQLSTATE", "57P01", "connect", "database", "conn closed", "unexpected EOF"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
