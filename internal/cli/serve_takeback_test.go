package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// TestServeTakesBackADeadWorkersJobs: three `zhizhi serve` processes share
// one PostgreSQL database with the default job budget (20 minutes). The one
// holding running crawls — found from the queue, not guessed — is killed
// with SIGKILL; another process takes each of its crawls back within a
// minute of the kill (not after the budget and more, as River's rescuer
// alone would), says so, and a live process attempts it again. In the end the stored articles equal the
// simulated web's truth with no duplicates, the sites saw no impolite
// request, and the processes that stopped cleanly left no heartbeat row.
func TestServeTakesBackADeadWorkersJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates (minutes); skipped with -short")
	}
	waitBound(t)
	busyCPUs(t)
	sw := newServeWorld(t, store.DialectPostgres)
	ctx := context.Background()
	args := []string{"--workers", "2"}
	procs := map[int]*serveProc{} // by pid
	for _, name := range []string{"worker-a", "worker-b", "worker-c"} {
		p := sw.startServe(t, filepath.Join(sw.dataDir, name), args...)
		procs[p.cmd.Process.Pid] = p
	}
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	// The process that runs the most crawls right now, from the queue's
	// attempted_by and the heartbeat rows' pids.
	var (
		victim   *serveProc
		victimID string
		held     []queue.JobInfo
	)
	for deadline := time.Now().Add(5 * time.Minute); victim == nil; { // a safety net, not a measure
		running, err := q.Jobs(ctx, rivertype.JobStateRunning)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sw.st.ServeProcesses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string][]queue.JobInfo{}
		for _, j := range running {
			if n := len(j.AttemptedBy); n > 0 {
				byID[j.AttemptedBy[n-1]] = append(byID[j.AttemptedBy[n-1]], j)
			}
		}
		for _, r := range rows {
			if p := procs[r.PID]; p != nil && len(byID[r.ID]) > len(held) {
				victim, victimID, held = p, r.ID, byID[r.ID]
			}
		}
		if victim == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no serve process ran a crawl within 5 minutes (registered: %+v)", rows)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	victim.kill()
	killed := time.Now()
	delete(procs, victim.cmd.Process.Pid)
	t.Logf("killed %s holding %d running crawls", victimID, len(held))

	// Each crawl it held is taken back (handed to the queue again, or
	// already attempted again by a live process) within a minute of the
	// kill, as seen here a little after it happened; and then attempted
	// again by a live process, once one has a free slot (the live ones may
	// be busy with polite crawls for minutes on a loaded machine).
	back := map[int64]time.Duration{}
	again := map[int64]time.Duration{}
	for deadline := killed.Add(10 * time.Minute); len(again) < len(held); { // a safety net, not a measure
		all, err := q.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range held {
			for _, j := range all {
				if j.ID != h.ID {
					continue
				}
				retried := len(j.AttemptedBy) > len(h.AttemptedBy)
				if _, seen := back[h.ID]; !seen && (retried || j.State != rivertype.JobStateRunning) {
					back[h.ID] = time.Since(killed)
					if back[h.ID] > time.Minute {
						t.Errorf("crawl %d (%s) was taken back %v after the kill; want within a minute",
							j.ID, j.TargetCode, back[h.ID].Round(time.Second))
					}
				}
				if _, seen := again[h.ID]; seen || !retried {
					continue
				}
				again[h.ID] = time.Since(killed)
				if by := j.AttemptedBy[len(h.AttemptedBy)]; by == victimID {
					t.Errorf("crawl %d (%s) was attempted again by the killed process %s", j.ID, j.TargetCode, by)
				}
			}
		}
		if len(back) < len(held) && time.Since(killed) > 2*time.Minute {
			t.Fatalf("%d of the %d crawls the killed process held were not taken back within 2 minutes of the kill",
				len(held)-len(back), len(held))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d crawls the killed process held were not attempted again within 10 minutes of the kill",
				len(held)-len(again), len(held))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("taken back after %v, attempted again after %v", back, again)
	said := false
	for _, p := range procs {
		said = said || strings.Contains(p.output(), "took back the running jobs of a serve process that stopped beating")
	}
	if !said {
		t.Error("no live process logged that it took back the killed one's crawls")
	}
	rows, err := sw.st.ServeProcesses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == victimID {
			t.Errorf("the killed process is still registered after its crawls were taken back: %+v", r)
		}
	}

	sw.waitDone(t, 20*time.Minute)
	for pid, p := range procs {
		if code := p.stop(t); code != 0 {
			t.Errorf("worker %d exited %d after SIGTERM:\n%s", pid, code, p.output())
		}
	}
	crawltest.Score(t, sw.st, sw.world.Sim.Truth(), sw.browser).Assert(t)
	n := checkPoliteFromSite(t, sw.world.Sim)
	if rows, err := sw.st.ServeProcesses(ctx); err != nil {
		t.Fatal(err)
	} else if len(rows) != 0 {
		t.Errorf("processes that stopped cleanly are still registered: %+v", rows)
	}
	t.Logf("%d requests seen by the sites", n)
}
