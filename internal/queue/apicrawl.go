package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// KindAPICrawl is a crawl job of the acquisition API (POST /v1/crawl),
// worked on the crawl queue beside the targets' crawls: the crawl workers
// bound all fetching together.
const KindAPICrawl = "acquire_crawl"

// APICrawlArgs is one acquisition API crawl job, whose request, state and
// frontier are in the database (store.CrawlJob). Unique per job while
// queued or running.
//
// It is worked like a target's crawl: for the budget, then it yields and
// is taken up again; a process that stops hands it back, one that dies
// under it is taken back (at serve's start on SQLite, by the sweep of
// dead processes on PostgreSQL), and whoever takes it up goes on from the
// job's frontier.
type APICrawlArgs struct {
	JobID string `json:"job_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (APICrawlArgs) Kind() string { return KindAPICrawl }

// InsertOpts implements river.JobArgsWithInsertOpts. A caller is waiting
// for the job: it goes before the scheduled crawls, as "crawl now" does.
func (APICrawlArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueCrawl, Priority: PriorityNow, MaxAttempts: crawlMaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: busyStates},
	}
}

// CrawlJobRunner works an acquisition API crawl job (*acquire.API): until
// it ends (finished), or stop closes or ctx ends (not finished: it goes
// on at its next run).
type CrawlJobRunner interface {
	RunCrawlJob(ctx context.Context, id string, stop <-chan struct{}) (finished bool, err error)
}

// StartCrawlJob queues the work of crawl job id, recorded already.
func (q *Queue) StartCrawlJob(ctx context.Context, id string) error {
	if _, err := q.jobs.Insert(ctx, APICrawlArgs{JobID: id}, nil); err != nil {
		return fmt.Errorf("queue crawl job %s: %w", id, err)
	}
	return nil
}

// RunCrawlJobs makes this process work the acquisition API's crawl jobs
// with r. A process without one hands them back to the queue for one
// that has.
func (q *Queue) RunCrawlJobs(r CrawlJobRunner) { q.crawlJobs.Store(&r) }

// apiCrawlWorker works an acquisition API crawl job.
type apiCrawlWorker struct {
	river.WorkerDefaults[APICrawlArgs]
	q *Queue
}

// noRunnerWait is how long a process without the acquisition API leaves a
// crawl job before it looks again (another process may have taken it).
const noRunnerWait = 30 * time.Second

func (w *apiCrawlWorker) Work(ctx context.Context, job *river.Job[APICrawlArgs]) error {
	rp := w.q.crawlJobs.Load()
	if rp == nil {
		return river.JobSnooze(noRunnerWait)
	}
	// As for targets' crawls: the work's context ends plainly when
	// River's does, so that our own stop is never taken for the site
	// failing; the job yields at its budget or when the process drains.
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	stop := make(chan struct{})
	budget := time.AfterFunc(w.q.opts.Budget, func() { close(stop) })
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-w.q.drain:
			if budget.Stop() {
				close(stop)
			}
		case <-done:
			budget.Stop()
		}
	}()
	finished, err := (*rp).RunCrawlJob(work, job.Args.JobID, stop)
	if err != nil {
		return fmt.Errorf("crawl job %s: %w", job.Args.JobID, err)
	}
	if !finished {
		return river.JobSnooze(continueAfter)
	}
	return nil
}
