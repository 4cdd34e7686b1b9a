package queue

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// racingJobs is a job client with another process's step slipped in: the
// first time an insert finds the target's crawl already queued, a worker
// takes that crawl up before the caller's next step.
type racingJobs struct {
	jobClient
	once  sync.Once
	after func(queued *rivertype.JobRow)
}

func (r *racingJobs) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := r.jobClient.Insert(ctx, args, opts)
	if err == nil && res.UniqueSkippedAsDuplicate {
		r.once.Do(func() { r.after(res.Job) })
	}
	return res, err
}

// "Crawl now" of a target whose scheduled crawl a worker starts at that very
// moment: the running crawl goes on untouched (no cancel is asked of it) and
// the caller is told it is running.
func TestCrawlNowLeavesARunningCrawlAlone(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tg, worker := faultWorld(t, st, sim.FaultHang) // the crawl's first request never answers: it stays running
		t.Cleanup(func() { worker.Stop(time.Second) })
		cli, err := Open(ctx, Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cli.Close)
		queued, err := cli.jobs.Insert(ctx, CrawlArgs{TargetID: tg.ID, TargetCode: tg.TargetCode, Reason: ReasonSchedule}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cli.jobs = &racingJobs{jobClient: cli.jobs, after: func(*rivertype.JobRow) {
			if err := worker.Start(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Minute) // a safety net, not a measure
			for {
				j, err := worker.jobs.JobGet(ctx, queued.Job.ID)
				if err == nil && j.State == rivertype.JobStateRunning {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the worker did not take up the queued crawl: %v %v", j, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}}

		e, err := cli.CrawlNow(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Running || e.JobID != queued.Job.ID {
			t.Errorf("crawl now while the crawl started: %+v, want it reported running (job %d)", e, queued.Job.ID)
		}
		j, err := worker.jobs.JobGet(ctx, queued.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != rivertype.JobStateRunning || strings.Contains(string(j.Metadata), "cancel_attempted_at") {
			t.Errorf("the running crawl after crawl now: %s, metadata %s; want it running with no cancel asked of it", j.State, j.Metadata)
		}
	})
}
