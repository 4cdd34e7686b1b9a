package queue

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// BenchmarkSchedulerTick measures one scheduler tick over the targets of
// 200 generated county sites when nothing is due (the common minute) and
// when every target is due (the first minute, or after downtime), on both
// dialects. It reports the time per target looked at.
func BenchmarkSchedulerTick(b *testing.B) {
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		b.Run(dialect, func(b *testing.B) {
			var st *store.Store
			if dialect == store.DialectSQLite {
				st = storetest.SQLite(b)
			} else {
				st = storetest.Postgres(b)
			}
			ctx := context.Background()
			targets := countyTargets(b, st, 200)
			if err := Migrate(ctx, st); err != nil {
				b.Fatal(err)
			}
			clock := &fakeClock{t: time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)}
			q, err := Open(ctx, Options{Store: st, Now: clock.Now})
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			// The first tick queues every target (never crawled).
			r, err := q.Scheduler().Tick(ctx)
			if err != nil || len(r.Crawls) != targets {
				b.Fatalf("first tick queued %d of %d targets: %v", len(r.Crawls), targets, err)
			}
			b.Run("nothing-due", func(b *testing.B) {
				for b.Loop() {
					clock.t = clock.t.Add(time.Minute)
					if r, err := q.Scheduler().Tick(ctx); err != nil || len(r.Crawls) != 0 {
						b.Fatalf("tick: %v %v", r.Crawls, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(targets), "ns/target")
			})
			b.Run("all-due", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					cancelJobsOf(ctx, q.jobs, func(int64) bool { return true })
					if _, err := st.DB().ExecContext(ctx, `UPDATE crawl_target SET schedule_slot_at = NULL, last_crawled_at = NULL`); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if r, err := q.Scheduler().Tick(ctx); err != nil || len(r.Crawls) != targets {
						b.Fatalf("tick queued %d of %d: %v", len(r.Crawls), targets, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(targets), "ns/target")
			})
		})
	}
}

// countyTargets syncs the configuration of n generated county sites into
// st and returns how many targets it has.
func countyTargets(b *testing.B, st *store.Store, n int) int {
	b.Helper()
	ctx := context.Background()
	w, err := sim.Start(ctx, sim.Options{Seed: 1, Counties: n})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	dir := filepath.Join(b.TempDir(), "counties")
	if err := w.WriteCountyConfig(dir, bundledConfig); err != nil {
		b.Fatal(err)
	}
	bundle, problems := config.Load(dir)
	if config.HasErrors(problems) {
		b.Fatalf("county config: %v", config.Errors(problems))
	}
	f, err := os.Open(filepath.Join(dir, config.DepartmentsFile))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	depts, bad := config.ReadDepartmentsCSV(f, "departments.csv")
	if len(bad) > 0 {
		b.Fatal(bad)
	}
	if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
		b.Fatal(err)
	}
	if _, err := configsync.Sync(ctx, st, bundle); err != nil {
		b.Fatal(err)
	}
	ts, err := st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	return len(ts)
}
