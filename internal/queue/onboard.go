package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"zhizhi/internal/onboard"
	"zhizhi/internal/store"
)

// KindOnboard is the onboarding wizard's run, and QueueOnboard its queue:
// a run reads sites at the polite pace for minutes and must not take a
// crawl worker meanwhile.
const (
	KindOnboard  = "onboard_run"
	QueueOnboard = "onboard"
)

// OnboardMaxRunning is how many wizard runs may read the web at once, all
// processes together (the console refuses more); each process has as many
// workers, so a run never waits for one.
const OnboardMaxRunning = 3

// OnboardTimeout stops a run that has not finished: the largest paste
// (200 sites) at the polite pace fits well within it.
const OnboardTimeout = 3 * time.Hour

// OnboardArgs is one run of the onboarding wizard, whose paste and state
// are in the database (store.OnboardRun). Unique per run while queued or
// running.
//
// A run is worked like a crawl: a job works for the budget, then yields
// and is taken up again; a process that stops hands its job back at once,
// and one that dies under it is taken back by River's rescuer. Whoever
// takes the job up goes on from the database: every line detected and
// every site scanned is kept (one row per line, so nothing is counted
// twice) and only the work that was under way is done again. The attempt
// that took the job up last owns the run; the writes of an earlier one
// that is somehow still going are ignored.
type OnboardArgs struct {
	RunID string `json:"run_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (OnboardArgs) Kind() string { return KindOnboard }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (OnboardArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueOnboard, Priority: PriorityNow, MaxAttempts: crawlMaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: busyStates},
	}
}

// StartOnboard queues the work of the run runID, recorded already.
func (q *Queue) StartOnboard(ctx context.Context, runID string) error {
	if _, err := q.jobs.Insert(ctx, OnboardArgs{RunID: runID}, nil); err != nil {
		return fmt.Errorf("queue onboarding run %s: %w", runID, err)
	}
	return nil
}

// onboardWorker does a wizard run's work: detect every pasted site, scan
// the matched ones, suggest each dept's binding.
type onboardWorker struct {
	river.WorkerDefaults[OnboardArgs]
	q *Queue
}

// Why a run's work stopped before its end. The first two end the run with
// what it has; the last hands it to the next attempt.
var (
	errOnboardCancel   = errors.New("cancelled by a person")
	errOnboardTimeout  = errors.New("the run took too long")
	errOnboardStopping = errors.New("the process is stopping")
)

// onboardBatch is how many lines a job works before it looks at its
// budget: as many as the wizard reads at once. A batch is not cut by the
// budget (a site half scanned would be scanned again by the next attempt,
// and a big one might never fit), only by the process stopping or the
// job's timeout.
const onboardBatch = 4

// cancelPoll is how often a run looks whether a person cancelled it.
const cancelPoll = time.Second

// Failures the person reads.
const (
	onboardPanicked  = "向导运行出错，已记录日志，请重新开始或联系系统管理员。"
	onboardNoDepts   = "读取本地部门失败，无法给出绑定建议，请稍后重新开始。"
	onboardCancelled = "任务已取消；下面是取消前完成的部分。"
	onboardGaveUp    = "向导任务多次中断后仍未完成（数据库或服务进程出错，已记录日志），已停止；下面是停止前完成的部分，请重新开始。"
)

// deptProblem is one dept row's trouble, kept while its site is scanned.
type deptProblem struct {
	DeptPath string `json:"dept_path"`
	Problem  string `json:"problem"`
}

func (w *onboardWorker) Work(ctx context.Context, job *river.Job[OnboardArgs]) (err error) {
	q, st, id := w.q, w.q.opts.Store, job.Args.RunID
	run, err := st.OnboardRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("onboarding run %s no longer exists", id))
	}
	if err != nil {
		return err
	}
	if run.State != store.OnboardRunning {
		return nil
	}
	// The run's own count of attempts, not River's (a snoozed job is
	// worked again under the same number): whoever begins last owns it.
	attempt, err := st.BeginOnboardAttempt(ctx, id)
	if err != nil || attempt == 0 {
		return err
	}
	// A run that cannot be finished is said to have failed rather than
	// left running: after its last attempt, and after a panic.
	dbCtx := context.WithoutCancel(ctx)
	defer func() {
		if p := recover(); p != nil {
			q.log().Error("onboarding wizard run failed", "run", id, "panic", p)
			err = river.JobCancel(fmt.Errorf("onboarding run %s: panic: %v", id, p))
			w.fail(dbCtx, id, onboardPanicked)
			return
		}
		var snooze *river.JobSnoozeError
		if err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts {
			q.log().Error("onboarding wizard run given up", "run", id, "err", err)
			w.fail(dbCtx, id, onboardGaveUp)
		}
	}()
	var lines []onboard.Line
	if err := json.Unmarshal(run.Lines, &lines); err != nil {
		return river.JobCancel(fmt.Errorf("onboarding run %s: lines: %w", id, err))
	}
	wiz, err := q.opts.Onboard(ctx)
	if err != nil {
		return fmt.Errorf("onboarding run %s: %w", id, err)
	}

	// The work's own context, and why it ended: a person's cancel and the
	// run's timeout end the run with what it has; the process stopping (or
	// the job's timeout) hands it on, and what was under way then is not
	// kept (it would be a site "failing" for our own stop). The context
	// ends plainly, as for crawls: a cause would reach net/http as the
	// fetch's error, and the fetcher would take our stop for the host
	// failing. The budget is looked at between batches.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	var (
		whyMu sync.Mutex
		why   error
	)
	stop := func(cause error) {
		whyMu.Lock()
		if why == nil {
			why = cause
		}
		whyMu.Unlock()
		cancelWork()
	}
	cause := func() error {
		whyMu.Lock()
		defer whyMu.Unlock()
		return why
	}
	defer stop(nil)
	defer context.AfterFunc(ctx, func() { stop(errOnboardStopping) })()
	timeout := time.AfterFunc(max(run.Started.Add(OnboardTimeout).Sub(q.now()), 0), func() { stop(errOnboardTimeout) })
	defer timeout.Stop()
	spent := make(chan struct{})
	budget := time.AfterFunc(q.opts.Budget, func() { close(spent) })
	defer budget.Stop()
	worked := false // every attempt does one batch at least
	yield := func() bool {
		if !worked {
			worked = true
			return false
		}
		select {
		case <-spent:
			return cause() == nil // a run being cancelled goes on to its end now
		default:
			return false
		}
	}
	var watching sync.WaitGroup
	defer watching.Wait()
	defer stop(nil) // runs before the wait: the watcher ends with the work
	watching.Add(1)
	go func() {
		defer watching.Done()
		w.watch(work, id, stop)
	}()
	if run.CancelRequested {
		stop(errOnboardCancel)
	}
	keep := func() bool {
		c := cause()
		return c == nil || c == errOnboardCancel || c == errOnboardTimeout
	}

	done, err := st.OnboardLines(ctx, id)
	if err != nil {
		return err
	}
	detected := map[int]onboard.Detection{}
	scanned := map[int]bool{}
	for _, l := range done {
		if l.Detection != nil {
			var d onboard.Detection
			if err := json.Unmarshal(l.Detection, &d); err != nil {
				return river.JobCancel(fmt.Errorf("onboarding run %s line %d: %w", id, l.Line, err))
			}
			detected[l.Line] = d
		}
		scanned[l.Line] = l.Site != nil
	}

	// Progress goes to the database as it comes, for every console to
	// show; a write that fails makes the attempt end in an error, so the
	// next one does that line again.
	var (
		mu       sync.Mutex
		lineOf   = map[string]int{}
		depts    = map[int][]deptProblem{}
		deptsN   = map[int]int{}
		failures []error
	)
	for n, d := range detected {
		lineOf[d.BaseURL] = n
	}
	wz := *wiz
	wz.Progress = func(e onboard.Event) {
		if !keep() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Detection != nil:
			raw, _ := json.Marshal(e.Detection)
			if err := st.RecordOnboardDetection(dbCtx, id, attempt, e.Detection.Line, raw); err != nil {
				failures = append(failures, err)
			}
		case e.Dept != nil:
			n := lineOf[e.BaseURL]
			deptsN[n]++
			if e.Dept.Problem != "" {
				depts[n] = append(depts[n], deptProblem{e.Dept.DeptPath, e.Dept.Problem})
			}
			raw, _ := json.Marshal(depts[n])
			if err := st.RecordOnboardDepts(dbCtx, id, attempt, n, deptsN[n], raw); err != nil {
				failures = append(failures, err)
			}
		case e.Site != nil:
			raw, _ := json.Marshal(e.Site)
			if err := st.RecordOnboardSite(dbCtx, id, attempt, lineOf[e.BaseURL], raw); err != nil {
				failures = append(failures, err)
			}
		}
	}

	var todo []onboard.Line
	for _, l := range lines {
		if _, ok := detected[l.Line]; !ok {
			todo = append(todo, l)
		}
	}
	for len(todo) > 0 {
		batch := todo[:min(onboardBatch, len(todo))]
		todo = todo[len(batch):]
		for _, d := range wz.Detect(work, batch) {
			if keep() {
				detected[d.Line] = d
			}
		}
		worked = true
		if !keep() || len(todo) > 0 && yield() {
			return river.JobSnooze(continueAfter)
		}
	}
	var toScan []onboard.Detection
	mu.Lock()
	for _, l := range lines {
		d := detected[l.Line]
		lineOf[d.BaseURL] = l.Line
		if d.Matched() && !scanned[l.Line] {
			toScan = append(toScan, d)
		}
	}
	mu.Unlock()
	for len(toScan) > 0 {
		if yield() {
			return river.JobSnooze(continueAfter)
		}
		batch := toScan[:min(onboardBatch, len(toScan))]
		toScan = toScan[len(batch):]
		wz.Scan(work, batch)
		if !keep() {
			return river.JobSnooze(continueAfter)
		}
	}
	mu.Lock()
	failed := errors.Join(failures...)
	mu.Unlock()
	if failed != nil {
		return failed
	}

	// The whole batch, from the database: what this attempt did and what
	// earlier ones did.
	done, err = st.OnboardLines(dbCtx, id)
	if err != nil {
		return err
	}
	var sites []onboard.Site
	for _, l := range done {
		if l.Site == nil {
			continue
		}
		var s onboard.Site
		if err := json.Unmarshal(l.Site, &s); err != nil {
			return river.JobCancel(fmt.Errorf("onboarding run %s line %d: %w", id, l.Line, err))
		}
		sites = append(sites, s)
	}
	wz.AssignCodes(sites)
	state, failure := store.OnboardDone, ""
	switch cause() {
	case errOnboardTimeout:
		state, failure = store.OnboardCancelled, fmt.Sprintf("任务超过 %d 小时未完成，已停止；下面是停止前完成的部分。", int(OnboardTimeout/time.Hour))
	case errOnboardCancel:
		state, failure = store.OnboardCancelled, onboardCancelled
	}
	// Suggestions need the departments even when the run was cancelled:
	// what was scanned is still shown.
	lctx, cancel := context.WithTimeout(dbCtx, time.Minute)
	defer cancel()
	local, err := st.ListDepartments(lctx)
	if err != nil {
		q.log().Error("onboarding wizard: list departments", "run", id, "err", err)
		state, failure = store.OnboardFailed, onboardNoDepts
	} else {
		onboard.NewDirectory(local).SuggestAll(sites)
	}
	include := make([]bool, len(sites))
	for i, s := range sites {
		// A site onboarded already or not scanned cannot be drafted; it
		// starts left out so the rest can go ahead.
		include[i] = s.ConfiguredAs == "" && s.Problem == ""
	}
	rawSites, err := json.Marshal(sites)
	if err != nil {
		return err
	}
	rawInclude, _ := json.Marshal(include)
	if _, err := st.FinishOnboardRun(dbCtx, id, attempt, state, failure, rawSites, rawInclude, q.now()); err != nil {
		return err
	}
	return nil
}

// watch stops the work when a person cancels the run, from any console.
func (w *onboardWorker) watch(work context.Context, id string, stop func(error)) {
	t := time.NewTicker(cancelPoll)
	defer t.Stop()
	for {
		select {
		case <-work.Done():
			return
		case <-w.q.drain:
			stop(errOnboardStopping)
			return
		case <-t.C:
			cancelled, err := w.q.opts.Store.OnboardCancelRequested(work, id)
			if err != nil {
				continue // looked again at the next tick
			}
			if cancelled {
				stop(errOnboardCancel)
				return
			}
		}
	}
}

func (w *onboardWorker) fail(ctx context.Context, id, failure string) {
	if err := w.q.opts.Store.FailOnboardRun(ctx, id, failure, w.q.now()); err != nil {
		w.q.log().Error("onboarding wizard: record the failure", "run", id, "err", err)
	}
}

func (q *Queue) now() time.Time {
	if q.opts.Now != nil {
		return q.opts.Now()
	}
	return time.Now()
}
