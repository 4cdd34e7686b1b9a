package queue

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// "Crawl now" goes before the crawls already waiting: with one worker, the
// urgent target is crawled first although it was queued last; a target
// whose scheduled crawl was waiting has it replaced by the urgent one.
func TestCrawlNowJumpsTheQueue(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := &fakeClock{t: time.Now()}
		w, _ := scheduleWorld(t, st, clock)
		onlySchedule(t, st) // the scheduler's own tick queues nothing
		targets := w.Targets(t, false)
		if len(targets) < 4 {
			t.Fatalf("%d targets, want at least 4", len(targets))
		}
		q, err := Open(ctx, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Workers: 1, Now: clock.Now, TickEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		waiting := targets[:3]
		for _, tg := range waiting {
			if _, err := q.jobs.Insert(ctx, CrawlArgs{TargetID: tg.ID, TargetCode: tg.TargetCode, Reason: ReasonSchedule}, nil); err != nil {
				t.Fatal(err)
			}
		}
		// One of the waiting targets is asked for: its job moves forward.
		moved, err := q.CrawlNow(ctx, waiting[2])
		if err != nil {
			t.Fatal(err)
		}
		if !moved.Moved {
			t.Errorf("crawl now of a target with a waiting crawl: %+v, want it moved forward", moved)
		}
		urgent := targets[3]
		e, err := q.CrawlNow(ctx, urgent)
		if err != nil {
			t.Fatal(err)
		}
		if e.Moved || e.Running {
			t.Errorf("crawl now of an idle target: %+v", e)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(30 * time.Second)

		// Wait until both urgent crawls are done.
		deadline := time.Now().Add(5 * time.Minute) // a safety net, not a measure
		for {
			a, _ := q.jobs.JobGet(ctx, e.JobID)
			b, _ := q.jobs.JobGet(ctx, moved.JobID)
			if a != nil && b != nil && a.State == rivertype.JobStateCompleted && b.State == rivertype.JobStateCompleted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the urgent crawls did not complete: %v / %v", a.State, b.State)
			}
			time.Sleep(100 * time.Millisecond)
		}
		jobs := crawlJobs(t, q)
		urgentIDs := map[int64]bool{e.JobID: true, moved.JobID: true}
		var lastUrgent time.Time
		for id := range urgentIDs {
			j, _ := q.jobs.JobGet(ctx, id)
			if j.AttemptedAt.After(lastUrgent) {
				lastUrgent = *j.AttemptedAt
			}
		}
		for code, js := range jobs {
			for _, j := range js {
				if urgentIDs[j.ID] || j.State == rivertype.JobStateCancelled {
					continue
				}
				if j.AttemptedAt != nil && j.AttemptedAt.Before(lastUrgent) {
					t.Errorf("scheduled crawl of %s started at %v, before an urgent one (%v)", code, j.AttemptedAt, lastUrgent)
				}
			}
		}
		// The moved target's waiting crawl was replaced, not doubled: its
		// one job is the urgent one, done.
		var states []rivertype.JobState
		for _, j := range jobs[waiting[2].TargetCode] {
			states = append(states, j.State)
		}
		if len(states) != 1 || states[0] != rivertype.JobStateCompleted {
			t.Errorf("jobs of the moved target: %v, want the urgent one alone, completed", states)
		}
	})
}
