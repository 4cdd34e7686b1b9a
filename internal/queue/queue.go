// Package queue runs zhizhi's work as jobs on River: one job per target
// crawl (unique per target while queued or running), re-checks of stored
// articles as low-priority jobs, and the scheduler as a periodic job that
// River's elected leader inserts. On SQLite River uses the embedded file
// (one process); on PostgreSQL any number of processes on any number of
// machines share the queue, each heartbeats in the database and the others
// take back the jobs of one that stopped beating (heartbeat.go), and the per-host politeness rules hold across all of them because
// the host lock and token bucket live in the database.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // schedules name Asia/Shanghai even where the system has no zone files
	"zhizhi/internal/config/zone"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/store"
)

// jobClient is the part of a River client (of either driver) zhizhi uses.
type jobClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobDelete(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	ID() string
}

// Defaults.
const (
	DefaultWorkers   = 4
	DefaultBudget    = 20 * time.Minute
	DefaultTickEvery = time.Minute
	// DefaultAlertRetry is the wait before an alert message is sent again
	// after its first attempt failed; each further wait doubles, up to an
	// hour.
	DefaultAlertRetry = 30 * time.Second
	// DrainGrace is how long work under way may finish after a drain
	// (a job's budget ran out, or the process is stopping).
	DrainGrace = 10 * time.Second
)

// Options configure a Queue.
type Options struct {
	Store *store.Store
	// Fetch, Bundle: what the crawl workers fetch through and read their
	// templates from. Without Fetch the queue only inserts (the CLI's
	// "crawl now").
	Fetch  crawl.Fetcher
	Bundle *config.Bundle
	// CurrentBundle, when set, replaces Bundle: each crawl and re-check
	// job asks it once, as it starts, and keeps what it got to its end, so
	// a configuration reloaded meanwhile reaches the jobs that start later.
	CurrentBundle func(ctx context.Context) *config.Bundle
	// Workers is how many jobs of the crawl queue this process works at
	// once (its sites side by side; the per-host rules hold regardless).
	Workers int
	// Budget is how long one crawl job works before it yields its worker
	// and continues later from the frontier, so that no job runs for hours
	// and River's rescuer can tell a dead worker's job from a long one.
	Budget time.Duration
	// TickEvery is how often the leader runs the scheduler.
	TickEvery time.Duration
	// Location is the time zone schedules are read in.
	Location *time.Location
	// OnResult, when set, receives every crawl and re-check job's result
	// (kind is KindCrawl or KindRecheck).
	OnResult func(ctx context.Context, kind string, t model.Target, r crawl.Result, wait time.Duration)
	// Alerter, when set, evaluates the alert rules every minute (on the
	// leader) and its messages are delivered as jobs of their own.
	Alerter *alert.Alerter
	// AlertRetry is the wait before a failed alert message is sent again
	// (DefaultAlertRetry); each further wait doubles, up to an hour.
	AlertRetry time.Duration
	// Cards is the near-duplicate index of stored cards the crawl workers
	// check new cards against (crawl.LoadCardIndex); nil: no check.
	Cards *crawl.CardIndex
	// Seal, when set, seals the days that are over (on the leader, every
	// ten minutes): the transparency ledgers' daily chain.
	Seal func(ctx context.Context) error
	// Now is the scheduler's clock (tests); time.Now by default.
	Now func() time.Time
	Log *slog.Logger
	// ID names this process in River (default: River's own).
	ID string
	// Onboard, when set, gives the onboarding wizard for one run (the
	// polite fetcher, the live configuration): this process then works
	// wizard runs, whoever started them (KindOnboard).
	Onboard func(ctx context.Context) (*onboard.Wizard, error)
}

// Queue is zhizhi's River client with its workers and scheduler.
type Queue struct {
	opts      Options
	jobs      jobClient
	counts    func(ctx context.Context) (map[rivertype.JobState]int, error)
	rescue    func(ctx context.Context, params *riverdriver.JobRescueManyParams) error
	closeDB   func()
	scheduler *Scheduler

	drainOnce sync.Once
	drain     chan struct{}
	// beatStop ends keepAlive, which closes beatDone.
	beatStop, beatDone chan struct{}
	// crawlJobs works the acquisition API's crawl jobs (RunCrawlJobs).
	crawlJobs atomic.Pointer[CrawlJobRunner]
}

// Migrate brings River's own tables up to date on st's database. Any number
// of processes may call it at once: on PostgreSQL an advisory lock
// serialises them, on SQLite the write lock does.
func Migrate(ctx context.Context, st *store.Store) error {
	switch st.Dialect() {
	case store.DialectPostgres:
		pool, err := st.QueuePGXPool(ctx, 2)
		if err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		defer pool.Close()
		// River's migrations each run in their own transaction (one adds an
		// enum value a later one uses), so the lock is a session lock on a
		// connection of its own, held while they run on the others.
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('zhizhi river migrate'))`); err != nil {
			return fmt.Errorf("job queue migration lock: %w", err)
		}
		defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('zhizhi river migrate'))`)
		m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		return nil
	default:
		db, err := st.QueueSQLiteDB(ctx)
		if err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		defer db.Close()
		// River runs each of its migrations in a transaction of its own,
		// as on PostgreSQL; a migration that fails leaves the ones before
		// it applied and recorded, and the next run goes on from there.
		m, err := rivermigrate.New(riversqlite.New(db), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("job queue migration: %w", err)
		}
		return nil
	}
}

// Open builds the River client on st's database. Its tables must exist
// (Migrate). With opts.Fetch set, it registers the workers, the queues and
// the periodic scheduler; Start begins working.
func Open(ctx context.Context, opts Options) (*Queue, error) {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.TickEvery <= 0 {
		opts.TickEvery = DefaultTickEvery
	}
	if opts.Location == nil {
		loc, err := zone.Load(DefaultTimeZone)
		if err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		opts.Location = loc
	}
	q := &Queue{opts: opts, drain: make(chan struct{})}
	cfg := q.riverConfig()
	switch opts.Store.Dialect() {
	case store.DialectPostgres:
		pool, err := opts.Store.QueuePGXPool(ctx, int32(opts.Workers+6))
		if err != nil {
			return nil, err
		}
		c, err := river.NewClient(riverpgxv5.New(pool), cfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("job queue: %w", err)
		}
		q.jobs, q.closeDB = c, pool.Close
		q.counts = countsOf(c.Driver())
		q.rescue = rescueOf(c.Driver())
	default:
		db, err := opts.Store.QueueSQLiteDB(ctx)
		if err != nil {
			return nil, err
		}
		c, err := river.NewClient(riversqlite.New(db), cfg)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("job queue: %w", err)
		}
		q.jobs, q.closeDB = c, func() { db.Close() }
		q.counts = countsOf(c.Driver())
		q.rescue = rescueOf(c.Driver())
	}
	q.scheduler = &Scheduler{Store: opts.Store, Jobs: q.jobs, Location: opts.Location, Now: opts.Now, Log: opts.Log}
	return q, nil
}

func countsOf[TTx any](d riverdriver.Driver[TTx]) func(ctx context.Context) (map[rivertype.JobState]int, error) {
	return func(ctx context.Context) (map[rivertype.JobState]int, error) {
		return d.GetExecutor().JobCountByAllStates(ctx, &riverdriver.JobCountByAllStatesParams{})
	}
}

func rescueOf[TTx any](d riverdriver.Driver[TTx]) func(ctx context.Context, params *riverdriver.JobRescueManyParams) error {
	return func(ctx context.Context, params *riverdriver.JobRescueManyParams) error {
		_, err := d.GetExecutor().JobRescueMany(ctx, params)
		return err
	}
}

// TakeBackOrphans hands the jobs an earlier process left running back to
// the queue at once (takeBack). Only for SQLite, whose database one serve
// process holds at a time (store.LockServe): any job running there when
// serve starts belongs to a process that is gone. On PostgreSQL the sweep
// of dead processes does it (keepAlive). It returns how many it took back.
func (q *Queue) TakeBackOrphans(ctx context.Context) (int, error) {
	if q.opts.Store.Dialect() != store.DialectSQLite {
		return 0, nil
	}
	n, err := q.takeBack(ctx, func(*rivertype.JobRow) bool { return true },
		"taken back at start: the serve process that ran it stopped without finishing")
	if err != nil {
		return n, fmt.Errorf("take back jobs left running: %w", err)
	}
	return n, nil
}

func (q *Queue) riverConfig() *river.Config {
	// A job's context ends a little after its budget and the drain grace;
	// River's rescuer takes a job back only after that, so it never
	// mistakes a live job for a dead worker's.
	timeout := q.opts.Budget + 2*DrainGrace
	rescueAfter := timeout + 2*DrainGrace
	cfg := &river.Config{
		ID:                   q.opts.ID,
		Logger:               riverLogger(q.log()),
		JobTimeout:           timeout,
		RescueStuckJobsAfter: rescueAfter,
		RetryPolicy:          &retryPolicy{st: q.opts.Store, rescueAfter: rescueAfter},
		MaxAttempts:          crawlMaxAttempts,
	}
	workers := river.NewWorkers()
	if q.opts.Onboard != nil {
		river.AddWorker(workers, &onboardWorker{q: q})
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{QueueOnboard: {MaxWorkers: OnboardMaxRunning}}
	}
	if q.opts.Fetch == nil {
		return cfg // insert-only, or wizard runs only: no crawls, no leader duties
	}
	river.AddWorker(workers, &crawlWorker{q: q})
	river.AddWorker(workers, &recheckWorker{q: q})
	river.AddWorker(workers, &tickWorker{q: q})
	river.AddWorker(workers, &apiCrawlWorker{q: q})
	cfg.Workers = workers
	if cfg.Queues == nil {
		cfg.Queues = map[string]river.QueueConfig{}
	}
	cfg.Queues[QueueCrawl] = river.QueueConfig{MaxWorkers: q.opts.Workers}
	cfg.Queues[QueueMaintenance] = river.QueueConfig{MaxWorkers: 1}
	cfg.PeriodicJobs = []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(q.opts.TickEvery),
			func() (river.JobArgs, *river.InsertOpts) { return TickArgs{}, nil },
			&river.PeriodicJobOpts{ID: KindTick, RunOnStart: true}),
	}
	if q.opts.Alerter != nil {
		river.AddWorker(workers, &alertCheckWorker{q: q})
		river.AddWorker(workers, &notifyWorker{q: q})
		cfg.Queues[QueueAlerts] = river.QueueConfig{MaxWorkers: 2}
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return AlertCheckArgs{}, nil },
			&river.PeriodicJobOpts{ID: KindAlerts, RunOnStart: true}))
	}
	if q.opts.Seal != nil {
		river.AddWorker(workers, &sealWorker{q: q})
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return SealArgs{}, nil },
			&river.PeriodicJobOpts{ID: KindSeal, RunOnStart: true}))
	}
	return cfg
}

// riverLogger passes on River's warnings and errors only: its routine
// information (producer counts every few seconds) would drown zhizhi's own.
func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn}).With("part", "river")
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

func (q *Queue) log() *slog.Logger {
	if q.opts.Log != nil {
		return q.opts.Log
	}
	return slog.Default()
}

// Scheduler returns the queue's scheduler (tests tick it by hand).
func (q *Queue) Scheduler() *Scheduler { return q.scheduler }

// Start begins working jobs; the leader starts the scheduler. A working
// queue first registers its process and then beats and sweeps until Stop
// (keepAlive).
func (q *Queue) Start(ctx context.Context) error {
	if q.opts.Fetch != nil {
		if err := q.register(ctx); err != nil {
			return fmt.Errorf("job queue: %w", err)
		}
	}
	if err := q.jobs.Start(ctx); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	if q.opts.Fetch != nil {
		q.beatStop, q.beatDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(q.beatDone)
			q.keepAlive(q.beatStop)
		}()
	}
	return nil
}

// Drain asks every job under way to stop taking new work: a crawl finishes
// the request in flight, stores what it has and is queued again to go on.
func (q *Queue) Drain() { q.drainOnce.Do(func() { close(q.drain) }) }

// Stop drains, waits up to grace for the jobs under way to return (each is
// recorded as snoozed or done, so the next process goes on from there),
// then cancels what is left and closes the queue's connections.
func (q *Queue) Stop(grace time.Duration) error {
	q.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := q.jobs.Stop(ctx)
	if err != nil && q.opts.Fetch != nil {
		hard, cancel2 := context.WithTimeout(context.Background(), DrainGrace)
		defer cancel2()
		err = q.jobs.StopAndCancel(hard)
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	if q.beatStop != nil {
		close(q.beatStop)
		<-q.beatDone
		// Every job ended: the row goes. Jobs left running keep it, and
		// with it going stale the others take them back in seconds.
		if err == nil {
			forget, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if ferr := q.opts.Store.ForgetServeProcess(forget, q.jobs.ID(), ""); ferr != nil {
				q.log().Warn("queue: this process's heartbeat row stays; the others remove it in a minute", "err", ferr)
			}
		}
	}
	q.closeDB()
	return err
}

// Close releases an insert-only queue.
func (q *Queue) Close() { q.closeDB() }

// Depth counts the queue's jobs by state.
func (q *Queue) Depth(ctx context.Context) (map[rivertype.JobState]int, error) {
	return q.counts(ctx)
}

// Enqueued says what CrawlNow did for one target.
type Enqueued struct {
	JobID int64
	// Running: the target's crawl is already running; nothing was added.
	Running bool
	// Moved: a queued crawl of the target was moved to the front.
	Moved bool
}

// CrawlNow queues a crawl of t ahead of every scheduled one. When the
// target already has a crawl waiting, that one is replaced by the urgent
// one; when its crawl is running, nothing is added.
func (q *Queue) CrawlNow(ctx context.Context, t model.Target) (Enqueued, error) {
	args := CrawlArgs{TargetID: t.ID, TargetCode: t.TargetCode, Reason: ReasonNow}
	opts := &river.InsertOpts{Priority: PriorityNow}
	for range 3 {
		r, err := q.jobs.Insert(ctx, args, opts)
		if err != nil {
			return Enqueued{}, fmt.Errorf("queue crawl of %s: %w", t.TargetCode, err)
		}
		if !r.UniqueSkippedAsDuplicate {
			return Enqueued{JobID: r.Job.ID}, nil
		}
		old := r.Job
		switch {
		case old.State == rivertype.JobStateRunning:
			return Enqueued{JobID: old.ID, Running: true}, nil
		case old.Kind == KindCrawl && old.Priority <= PriorityNow:
			return Enqueued{JobID: old.ID}, nil
		}
		// A scheduled crawl is waiting at a lower priority: remove it and
		// insert the urgent one in its place. Delete, not cancel: a worker
		// may have started it since the insert looked, and River deletes
		// only a job that is not running, where a cancel would stop the
		// crawl under way.
		if _, err := q.jobs.JobDelete(ctx, old.ID); err != nil {
			switch {
			case errors.Is(err, rivertype.ErrJobRunning):
				return Enqueued{JobID: old.ID, Running: true}, nil
			case errors.Is(err, rivertype.ErrNotFound): // finished and cleaned up meanwhile
			default:
				return Enqueued{}, fmt.Errorf("move crawl of %s forward: %w", t.TargetCode, err)
			}
		}
		args.Reason = ReasonNow
		r2, err := q.jobs.Insert(ctx, args, opts)
		if err != nil {
			return Enqueued{}, fmt.Errorf("queue crawl of %s: %w", t.TargetCode, err)
		}
		if !r2.UniqueSkippedAsDuplicate {
			return Enqueued{JobID: r2.Job.ID, Moved: true}, nil
		}
		// It started between the two steps: look again.
	}
	return Enqueued{}, fmt.Errorf("queue crawl of %s: its job keeps changing state; try again", t.TargetCode)
}

// JobInfo is one crawl or re-check job.
type JobInfo struct {
	ID          int64
	Kind        string
	TargetCode  string
	State       rivertype.JobState
	Priority    int
	Attempt     int
	ScheduledAt time.Time
	AttemptedAt *time.Time // when its last attempt started; nil before the first
	AttemptedBy []string
	LastError   string
}

// Unfinished lists the crawl and re-check jobs that are queued, running,
// snoozed or waiting for a retry, by id.
func (q *Queue) Unfinished(ctx context.Context) ([]JobInfo, error) {
	return q.Jobs(ctx, busyStates...)
}

// Jobs lists the crawl and re-check jobs in the given states (every state
// when none is given) that River still keeps, by id.
func (q *Queue) Jobs(ctx context.Context, states ...rivertype.JobState) ([]JobInfo, error) {
	return q.JobsOfKinds(ctx, []string{KindCrawl, KindRecheck}, states...)
}

// JobsOfKinds is Jobs for the jobs of kinds (KindAPICrawl: the
// acquisition API's crawl jobs, whose TargetCode is empty).
func (q *Queue) JobsOfKinds(ctx context.Context, kinds []string, states ...rivertype.JobState) ([]JobInfo, error) {
	params := river.NewJobListParams().Kinds(kinds...).First(10000)
	if len(states) > 0 {
		params = params.States(states...)
	}
	list, err := q.jobs.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]JobInfo, 0, len(list.Jobs))
	for _, j := range list.Jobs {
		var a CrawlArgs
		_ = jsonUnmarshal(j.EncodedArgs, &a)
		ji := JobInfo{ID: j.ID, Kind: j.Kind, TargetCode: a.TargetCode, State: j.State, Priority: j.Priority,
			Attempt: j.Attempt, ScheduledAt: j.ScheduledAt, AttemptedAt: j.AttemptedAt, AttemptedBy: j.AttemptedBy}
		if n := len(j.Errors); n > 0 {
			ji.LastError = j.Errors[n-1].Error
		}
		out = append(out, ji)
	}
	return out, nil
}

// AttemptsByWorker counts, per River client id, how many crawl and re-check jobs it
// has attempted among those finished or not yet cleaned up.
func (q *Queue) AttemptsByWorker(ctx context.Context) (map[string]int, error) {
	params := river.NewJobListParams().Kinds(KindCrawl, KindRecheck).
		States(append(busyStates, rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded)...).First(10000)
	list, err := q.jobs.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := map[string]int{}
	for _, j := range list.Jobs {
		for _, id := range j.AttemptedBy {
			out[id]++
		}
	}
	return out, nil
}
