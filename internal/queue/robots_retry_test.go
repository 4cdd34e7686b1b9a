package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// A site whose robots.txt cannot be read (it answers 500) is closed for the
// moment, not for good: the crawl asked for is retried later — after the
// first retry's 5 minutes at the soonest — instead of being cancelled until
// its next schedule slot.
func TestCrawlRetriedWhenRobotsUnreachable(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tg, q := faultWorld(t, st, sim.FaultRobots500)
		e, err := q.CrawlNow(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		asked := time.Now()
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(30 * time.Second)
		deadline := time.Now().Add(2 * time.Minute) // a safety net, not a measure
		var j *rivertype.JobRow
		for {
			j, err = q.jobs.JobGet(ctx, e.JobID)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != rivertype.JobStateAvailable && j.State != rivertype.JobStateRunning {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the crawl is still %s", j.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if j.State != rivertype.JobStateRetryable {
			t.Fatalf("the crawl of a site whose robots.txt answered 500 is %s (%v); want it retried later", j.State, j.Errors)
		}
		if n := len(j.Errors); n == 0 || !strings.Contains(j.Errors[n-1].Error, "robots.txt") {
			t.Errorf("its recorded error %v does not name robots.txt", j.Errors)
		}
		if j.ScheduledAt.Before(asked.Add(5 * time.Minute)) {
			t.Errorf("retried at %v, sooner than 5 minutes after it was asked for (%v)", j.ScheduledAt, asked)
		}
	})
}

// faultWorld is the scheduling world with one target's host given fault
// and a started-not queue of one crawl worker on it.
func faultWorld(t *testing.T, st *store.Store, kind string) (model.Target, *Queue) {
	t.Helper()
	ctx := context.Background()
	clock := &fakeClock{t: time.Now()}
	w, _ := scheduleWorld(t, st, clock)
	onlySchedule(t, st)
	tg := w.Targets(t, false)[0]
	site, err := st.SiteByID(ctx, tg.SiteID)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim.SetFault(fetch.SiteHost(*site), sim.Fault{Kind: kind}); err != nil {
		t.Fatal(err)
	}
	q, err := Open(ctx, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Workers: 1, Now: clock.Now, TickEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tg, q
}
