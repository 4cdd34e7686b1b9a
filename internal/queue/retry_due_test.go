package queue

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// A failed article whose retry has come is fetched by serve within
// minutes, not at the target's next cron slot: the scheduler's tick queues
// a job for it at the priority of a scheduled crawl, and a worker fetches
// it through the polite client.
func TestDueRetryFetchedByServe(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := &fakeClock{t: time.Now()}
		w, _ := scheduleWorld(t, st, clock)
		onlySchedule(t, st) // no crawl is ever due: only the retry can fetch it
		const host, code = "www.lianzhou.gov.test", "lianzhou_tzgg"
		tg, err := st.TargetByCode(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		var article string
		for _, a := range w.Sim.Truth() {
			if a.TargetCode == code {
				article = a.URL
				break
			}
		}
		u, err := url.Parse(article)
		if err != nil || article == "" {
			t.Fatalf("no %s article (%v)", code, err)
		}
		if err := w.Sim.SetFault(host, sim.Fault{Kind: sim.Fault503, PathPrefix: u.Path, Count: 1}); err != nil {
			t.Fatal(err)
		}
		// Crawled ten minutes ago: the 503's retry, five minutes after it,
		// has come.
		w.Crawler(func() time.Time { return time.Now().Add(-10 * time.Minute) }).Run(ctx, []model.Target{*tg})
		waiting, n, err := st.WaitingRetries(ctx, tg.ID, 10)
		if err != nil || n != 1 {
			t.Fatalf("after the 503: %d links waiting for a retry (%v), want 1", n, err)
		}
		if waiting[0].NextAttemptAt == nil || waiting[0].NextAttemptAt.After(time.Now()) {
			t.Fatalf("the retry is not due yet: %v", waiting[0].NextAttemptAt)
		}

		q, err := Open(ctx, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Workers: 1, TickEvery: time.Minute,
			Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(30 * time.Second)
		deadline := time.Now().Add(3 * time.Minute) // a safety net, not a measure
		for {
			_, n, err := st.WaitingRetries(ctx, tg.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve did not fetch the article whose retry was due (%d still waiting)", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
		fetched := 0
		for _, a := range w.Sim.AccessLog(host) {
			if a.Path == u.Path && a.Status == 200 {
				fetched++
			}
		}
		if fetched != 1 {
			t.Errorf("the article was fetched %d times, want once", fetched)
		}
		list, err := q.jobs.JobList(ctx, river.NewJobListParams().Kinds(KindRecheck).First(100))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, j := range list.Jobs {
			var a RecheckArgs
			if json.Unmarshal(j.EncodedArgs, &a) == nil && a.TargetID == tg.ID {
				found = true
				if j.Priority != PrioritySchedule {
					t.Errorf("the retry job has priority %d, want that of a scheduled crawl (%d)", j.Priority, PrioritySchedule)
				}
			}
		}
		if !found {
			t.Error("no job of the target fetched its retry")
		}
	})
}
