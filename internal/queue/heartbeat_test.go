package queue

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// A process that stops beating while its crawl runs — paused, not dead: its
// job and its host's work lock live on — has the crawl taken back by
// another process within a minute of its last beat, with no back-off at
// the site. The other process does not crawl the host while the paused
// one's job holds its lock; when the paused one comes back and stops, the
// other goes on and finishes the crawl. The site never sees two requests at
// once, and a process that stops cleanly leaves no heartbeat row.
func TestSweepTakesBackAPausedProcessesJobOnlyWhenItsHostIsFree(t *testing.T) {
	storetest.ForEachDialectInParallel(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := &fakeClock{t: time.Now()}
		w, _ := scheduleWorld(t, st, clock)
		onlySchedule(t, st)
		tg, err := st.TargetByCode(ctx, "gd_ref_wjk") // a column robots.txt allows
		if err != nil {
			t.Fatal(err)
		}
		site, err := st.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		host := fetch.SiteHost(*site)

		type run struct {
			started time.Time
			err     error
		}
		var mu sync.Mutex
		var runsOfB []run
		open := func(id string, onResult func(context.Context, string, model.Target, crawl.Result, time.Duration)) *Queue {
			q, err := Open(ctx, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Workers: 1, Now: clock.Now,
				TickEvery: time.Hour, ID: id, OnResult: onResult})
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
		// The host's request lock, held here: process A's crawl waits at
		// its first request, its job running and the host's work lock held.
		hold, err := st.LockHost(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { hold() }()
		a := open("proc-a", nil)
		b := open("proc-b", func(_ context.Context, _ string, _ model.Target, r crawl.Result, _ time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			runsOfB = append(runsOfB, run{r.Started, r.Err})
		})
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		aStopped := false
		defer func() {
			if !aStopped {
				a.Stop(30 * time.Second)
			}
		}()
		e, err := a.CrawlNow(ctx, *tg)
		if err != nil {
			t.Fatal(err)
		}
		job := waitJob(t, a, e.JobID, 2*time.Minute, "run by proc-a", func(j *rivertype.JobRow) bool {
			return j.State == rivertype.JobStateRunning && slices.Equal(j.AttemptedBy, []string{"proc-a"})
		})
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		bStopped := false
		defer func() {
			if !bStopped {
				b.Stop(30 * time.Second)
			}
		}()

		// A stops beating, as a paused process does: its job and locks
		// live on.
		close(a.beatStop)
		<-a.beatDone
		a.beatStop = nil
		lastBeat := time.Now()
		job = waitJob(t, b, e.JobID, 3*time.Minute, "taken back from proc-a", func(j *rivertype.JobRow) bool {
			return len(j.Errors) > 0 && strings.Contains(j.Errors[len(j.Errors)-1].Error, "proc-a stopped beating")
		})
		if took := time.Since(lastBeat); took > time.Minute {
			t.Errorf("the paused process's crawl was taken back %v after its last beat; want within a minute", took.Round(time.Second))
		}
		if job.State == rivertype.JobStateDiscarded || job.State == rivertype.JobStateCancelled || job.State == rivertype.JobStateCompleted {
			t.Fatalf("the crawl taken back is %s; want it queued again", job.State)
		}
		if hs, err := st.GetHostState(ctx, host); errors.Is(err, store.ErrNotFound) {
			// never charged
		} else if err != nil {
			t.Fatal(err)
		} else if hs.BackoffUntil != nil || hs.BreakerUntil != nil {
			t.Errorf("taking back a crawl charged the site: back-off until %v, breaker until %v", hs.BackoffUntil, hs.BreakerUntil)
		}
		// The sweep forgets the dead process just after handing its jobs
		// back: give it a moment on a loaded machine.
		procs := serveProcessIDs(t, st)
		for end := time.Now().Add(30 * time.Second); (slices.Contains(procs, "proc-a") || !slices.Contains(procs, "proc-b")) && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
			procs = serveProcessIDs(t, st)
		}
		if slices.Contains(procs, "proc-a") || !slices.Contains(procs, "proc-b") {
			t.Errorf("registered processes after the take-back: %v; want proc-b without proc-a", procs)
		}

		// B tries the crawl and finds the host's work lock held by A's job.
		waitJob(t, b, e.JobID, 3*time.Minute, "tried by proc-b", func(j *rivertype.JobRow) bool {
			return slices.Contains(j.AttemptedBy, "proc-b") && j.State != rivertype.JobStateRunning
		})
		mu.Lock()
		if len(runsOfB) > 0 {
			t.Errorf("proc-b crawled the host while proc-a's job held it: %+v", runsOfB)
		}
		mu.Unlock()
		if n := len(siteLog(w.Sim)); n != 0 {
			t.Errorf("the sites saw %d requests while both waited; want none", n)
		}

		// A comes back: its crawl goes on (B keeps off the host), then A
		// stops, and its late word on the job changes nothing.
		hold()
		hold = func() {}
		for deadline := time.Now().Add(2 * time.Minute); len(siteLog(w.Sim)) < 2; { // a safety net, not a measure
			if time.Now().After(deadline) {
				t.Fatalf("proc-a's crawl did not go on when it came back (%d requests)", len(siteLog(w.Sim)))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := a.Stop(30 * time.Second); err != nil {
			t.Errorf("proc-a stopped with %v", err)
		}
		aStopped = true
		stoppedA := time.Now()
		mu.Lock()
		if len(runsOfB) > 0 {
			t.Errorf("proc-b crawled the host while proc-a's job held it: %+v", runsOfB)
		}
		mu.Unlock()

		job = waitJob(t, b, e.JobID, 10*time.Minute, "finished by proc-b", func(j *rivertype.JobRow) bool {
			return j.State == rivertype.JobStateCompleted
		})
		if last := job.AttemptedBy[len(job.AttemptedBy)-1]; last != "proc-b" {
			t.Errorf("the crawl was finished by %s (attempts %v); want proc-b", last, job.AttemptedBy)
		}
		mu.Lock()
		for _, r := range runsOfB {
			if r.started.Before(stoppedA) {
				t.Errorf("proc-b's crawl began at %v, before proc-a's job ended at %v", r.started, stoppedA)
			}
		}
		if len(runsOfB) == 0 || runsOfB[len(runsOfB)-1].err != nil {
			t.Errorf("proc-b's crawls: %+v; want the last one a success", runsOfB)
		}
		mu.Unlock()
		// Between them the two fetched every article of the target once:
		// none lost, none twice.
		fetched := map[string]int{}
		for _, r := range siteLog(w.Sim) {
			if r.InFlightAtArrival != 0 {
				t.Errorf("%s %s arrived with %d other requests in flight", r.Method, r.Path, r.InFlightAtArrival)
			}
			if r.Method == "GET" && r.Status == 200 {
				fetched[r.Host+r.Path]++
			}
		}
		articles := 0
		for _, a := range w.Sim.Truth() {
			if a.TargetCode != tg.TargetCode {
				continue
			}
			articles++
			u, err := url.Parse(a.URL)
			if err != nil {
				t.Fatal(err)
			}
			if n := fetched[u.Host+u.RequestURI()]; n != 1 {
				t.Errorf("article %s was fetched %d times; want once", a.URL, n)
			}
		}
		if articles == 0 {
			t.Fatalf("the simulated web has no article of %s", tg.TargetCode)
		}
		if err := b.Stop(30 * time.Second); err != nil {
			t.Errorf("proc-b stopped with %v", err)
		}
		bStopped = true
		if procs := serveProcessIDs(t, st); slices.Contains(procs, "proc-b") {
			t.Errorf("proc-b stopped cleanly and is still registered: %v", procs)
		}
	})
}

// waitJob polls job id through q until ok says yes.
func waitJob(t *testing.T, q *Queue, id int64, limit time.Duration, what string, ok func(*rivertype.JobRow) bool) *rivertype.JobRow {
	t.Helper()
	deadline := time.Now().Add(limit) // a safety net, not a measure
	for {
		j, err := q.jobs.JobGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d was not %s within %v: %s attempt %d by %v, errors %v", id, what, limit, j.State, j.Attempt, j.AttemptedBy, j.Errors)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// siteLog is what every host of the simulated web saw.
func siteLog(w *sim.World) []sim.Access {
	var all []sim.Access
	for _, h := range w.Hosts() {
		all = append(all, w.AccessLog(h)...)
	}
	return all
}

func serveProcessIDs(t *testing.T, st *store.Store) []string {
	t.Helper()
	list, err := st.ServeProcesses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range list {
		ids = append(ids, p.ID)
	}
	return ids
}
