package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const bundledConfig = "../../demo/config"

// fakeClock is the scheduler's clock in these tests.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

// scheduleWorld is the simulated web synced into a store that has the job
// queue's tables, and an insert-only queue whose scheduler runs on clock.
func scheduleWorld(t *testing.T, st *store.Store, clock *fakeClock) (*crawltest.World, *Queue) {
	t.Helper()
	ctx := context.Background()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig, Sim: sim.Options{Seed: 1}})
	if err := Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := Open(ctx, Options{Store: st, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return w, q
}

// setSchedule gives target code the cron expr and the last crawl at last
// (nil: never), and forgets any slot it was queued for.
func setSchedule(t *testing.T, st *store.Store, code, expr string, last *time.Time) {
	t.Helper()
	lastSQL := "NULL"
	if last != nil {
		if st.Dialect() == store.DialectPostgres {
			lastSQL = "'" + last.UTC().Format(time.RFC3339Nano) + "'"
		} else {
			lastSQL = "'" + last.UTC().Format("2006-01-02T15:04:05.000000Z") + "'"
		}
	}
	q := fmt.Sprintf(`UPDATE crawl_target SET schedule_cron = '%s', last_crawled_at = %s, schedule_slot_at = NULL WHERE target_code = '%s'`, expr, lastSQL, code)
	if _, err := st.DB().ExecContext(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// onlySchedule leaves a schedule on the named targets only: the others get
// none, so they are never due.
func onlySchedule(t *testing.T, st *store.Store) {
	t.Helper()
	if _, err := st.DB().ExecContext(context.Background(), `UPDATE crawl_target SET schedule_cron = ''`); err != nil {
		t.Fatal(err)
	}
}

// crawlJobs lists the crawl jobs in the given states, by target code.
func crawlJobs(t *testing.T, q *Queue, states ...rivertype.JobState) map[string][]*rivertype.JobRow {
	t.Helper()
	p := river.NewJobListParams().Kinds(KindCrawl).First(10000)
	if len(states) > 0 {
		p = p.States(states...)
	}
	list, err := q.jobs.JobList(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*rivertype.JobRow{}
	for _, j := range list.Jobs {
		var a CrawlArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		out[a.TargetCode] = append(out[a.TargetCode], j)
	}
	return out
}

func firstTarget(t *testing.T, st *store.Store) model.Target {
	t.Helper()
	ts, err := st.ListTargets(context.Background(), store.TargetFilter{EnabledOnly: true})
	if err != nil || len(ts) == 0 {
		t.Fatalf("no enabled target: %v", err)
	}
	return ts[0]
}

func tick(t *testing.T, q *Queue) TickResult {
	t.Helper()
	r, err := q.Scheduler().Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) > 0 {
		t.Fatalf("tick problems: %v", r.Problems)
	}
	return r
}

// A schedule is read in Asia/Shanghai: "30 2 * * *" is 02:30 Beijing time,
// 18:30 UTC the day before; not 02:30 UTC.
func TestScheduleRunsAtCronInShanghai(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		clock := &fakeClock{}
		_, q := scheduleWorld(t, st, clock)
		onlySchedule(t, st)
		tg := firstTarget(t, st)
		// Last crawled 2026-11-01 08:00 Beijing time.
		last := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		setSchedule(t, st, tg.TargetCode, "30 2 * * *", &last)

		clock.t = time.Date(2026, 11, 1, 18, 29, 59, 0, time.UTC) // 02:29:59 on the 2nd in Beijing
		if r := tick(t, q); len(r.Crawls) != 0 {
			t.Fatalf("crawl queued at 02:29:59 Beijing time for a 02:30 schedule: %v", r.Crawls)
		}
		clock.t = time.Date(2026, 11, 1, 18, 30, 0, 0, time.UTC) // 02:30 on the 2nd in Beijing
		r := tick(t, q)
		if len(r.Crawls) != 1 || r.Crawls[0] != tg.TargetCode {
			t.Fatalf("at 02:30 Beijing time the tick queued %v, want [%s]", r.Crawls, tg.TargetCode)
		}
		jobs := crawlJobs(t, q)[tg.TargetCode]
		if len(jobs) != 1 {
			t.Fatalf("%d crawl jobs of %s, want 1", len(jobs), tg.TargetCode)
		}
		var a CrawlArgs
		_ = json.Unmarshal(jobs[0].EncodedArgs, &a)
		want := time.Date(2026, 11, 2, 2, 30, 0, 0, time.FixedZone("CST", 8*3600))
		if a.Slot == nil || !a.Slot.Equal(want) {
			t.Errorf("job slot %v, want %v", a.Slot, want)
		}
		if jobs[0].Priority != PrioritySchedule {
			t.Errorf("scheduled crawl has priority %d, want %d", jobs[0].Priority, PrioritySchedule)
		}
		// The same minute again, and the rest of the day: nothing more.
		for _, at := range []time.Time{clock.t, clock.t.Add(time.Minute), clock.t.Add(23 * time.Hour)} {
			clock.t = at
			if r := tick(t, q); len(r.Crawls) != 0 {
				t.Errorf("tick at %v queued %v again", at, r.Crawls)
			}
		}
		// The next day's 02:30 Beijing time comes.
		clock.t = time.Date(2026, 11, 2, 18, 30, 0, 0, time.UTC)
		cancelAll(t, q)
		if r := tick(t, q); len(r.Crawls) != 1 {
			t.Errorf("the next day's slot queued %v, want one crawl", r.Crawls)
		}
	})
}

// cancelAll cancels every queued crawl (as if it had run), so that only
// the recorded slot stops a second insert, not the per-target uniqueness.
func cancelAll(t *testing.T, q *Queue) {
	t.Helper()
	n, err := cancelJobsOf(context.Background(), q.jobs, func(int64) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no queued job to cancel")
	}
}

// After ten days down, a daily schedule runs once, not ten times.
func TestMissedRunsRunOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		clock := &fakeClock{}
		_, q := scheduleWorld(t, st, clock)
		onlySchedule(t, st)
		tg := firstTarget(t, st)
		last := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		setSchedule(t, st, tg.TargetCode, "0 3 * * *", &last)
		clock.t = last.Add(10 * 24 * time.Hour)
		if r := tick(t, q); len(r.Crawls) != 1 {
			t.Fatalf("after 10 missed days the tick queued %v, want one crawl", r.Crawls)
		}
		cancelAll(t, q)
		for i := 0; i < 5; i++ {
			clock.t = clock.t.Add(time.Minute)
			if r := tick(t, q); len(r.Crawls) != 0 {
				t.Fatalf("tick %d after the catch-up queued %v: a missed slot ran twice", i+1, r.Crawls)
			}
		}
		if n := len(crawlJobs(t, q)[tg.TargetCode]); n != 1 {
			t.Errorf("%d crawl jobs for 10 missed days, want 1", n)
		}
	})
}

// A target never crawled is crawled at once; one without a schedule only
// when asked.
func TestNewTargetRunsAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		clock := &fakeClock{t: time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)}
		_, q := scheduleWorld(t, st, clock)
		onlySchedule(t, st)
		tg := firstTarget(t, st)
		setSchedule(t, st, tg.TargetCode, "0 3 * * *", nil)
		r := tick(t, q)
		if len(r.Crawls) != 1 || r.Crawls[0] != tg.TargetCode {
			t.Fatalf("a never-crawled target: tick queued %v, want [%s]", r.Crawls, tg.TargetCode)
		}
		var a CrawlArgs
		_ = json.Unmarshal(crawlJobs(t, q)[tg.TargetCode][0].EncodedArgs, &a)
		if a.Reason != ReasonFirst {
			t.Errorf("reason %q, want %q", a.Reason, ReasonFirst)
		}
	})
}

// Disabling a target cancels its queued crawl at the next tick.
func TestDisabledTargetJobCancelled(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		clock := &fakeClock{t: time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)}
		_, q := scheduleWorld(t, st, clock)
		onlySchedule(t, st)
		tg := firstTarget(t, st)
		setSchedule(t, st, tg.TargetCode, "0 3 * * *", nil)
		tick(t, q)
		if n := len(crawlJobs(t, q, rivertype.JobStateAvailable)[tg.TargetCode]); n != 1 {
			t.Fatalf("%d available crawl jobs of %s, want 1", n, tg.TargetCode)
		}
		if _, err := st.DB().ExecContext(context.Background(), `UPDATE crawl_target SET enabled = false WHERE target_code = '`+tg.TargetCode+`'`); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute)
		r := tick(t, q)
		if r.Cancelled != 1 {
			t.Errorf("tick cancelled %d jobs, want 1", r.Cancelled)
		}
		jobs := crawlJobs(t, q)[tg.TargetCode]
		if len(jobs) != 1 || jobs[0].State != rivertype.JobStateCancelled {
			t.Fatalf("the disabled target's job: %+v, want one cancelled", jobs)
		}
		// And a disabled target is not scheduled again.
		clock.t = clock.t.Add(48 * time.Hour)
		if r := tick(t, q); len(r.Crawls) != 0 {
			t.Errorf("a disabled target was queued: %v", r.Crawls)
		}
	})
}
