package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/alert"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// hostBusyWait is how long (plus up to as much again, at random) a job
// whose host another job is working waits before it looks again.
const hostBusyWait = 15 * time.Second

// continueAfter is how soon a crawl that used up its budget, or was
// stopped with the process, is picked up again.
const continueAfter = time.Second

// crawlWorker crawls one target: walk its lists, fetch its new and due
// links (re-checks are their own jobs).
type crawlWorker struct {
	river.WorkerDefaults[CrawlArgs]
	q *Queue
}

func (w *crawlWorker) Work(ctx context.Context, job *river.Job[CrawlArgs]) error {
	return w.q.runTarget(ctx, KindCrawl, job.JobRow, job.Args.TargetID)
}

// recheckWorker revalidates a target's stored articles that are due.
type recheckWorker struct {
	river.WorkerDefaults[RecheckArgs]
	q *Queue
}

func (w *recheckWorker) Work(ctx context.Context, job *river.Job[RecheckArgs]) error {
	return w.q.runTarget(ctx, KindRecheck, job.JobRow, job.Args.TargetID)
}

// tickWorker runs the scheduler.
type tickWorker struct {
	river.WorkerDefaults[TickArgs]
	q *Queue
}

func (w *tickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	_, err := w.q.scheduler.Tick(ctx)
	return err
}

// Timeout lets a tick run at most a minute whatever the client's job
// timeout.
func (w *tickWorker) Timeout(*river.Job[TickArgs]) time.Duration { return time.Minute }

// runTarget is the work of a crawl or re-check job. Its result decides what
// River does next:
//   - done, or failed articles only (they wait in the frontier): complete;
//   - the budget ran out or the process is stopping: snooze, so the job is
//     taken up again (here or by another worker) and goes on from the
//     frontier;
//   - the host's breaker is open or it is backing off: snooze until the
//     host may be asked again, never sooner;
//   - a CAPTCHA or a robots.txt refusal of the whole host: cancel; a
//     person has to look, and the next schedule slot tries again (a
//     robots.txt that cannot be read is a failure, retried);
//   - the target itself failed (a list page, the configuration): an error,
//     retried by retryPolicy.
func (q *Queue) runTarget(ctx context.Context, kind string, row *rivertype.JobRow, targetID int64) error {
	err := q.runTargetOnce(ctx, kind, row, targetID)
	if store.IsUnavailable(err) {
		// The database did not answer before the crawl began: not the
		// target's failure, and no attempt on the sites' back-off. Once
		// it answers the job goes on.
		if werr := q.waitForStore(ctx, err); werr != nil {
			return werr
		}
		return river.JobSnooze(continueAfter)
	}
	return err
}

// runTargetOnce is runTarget but for a database that does not answer
// before the crawl begins.
func (q *Queue) runTargetOnce(ctx context.Context, kind string, row *rivertype.JobRow, targetID int64) error {
	st := q.opts.Store
	t, err := st.TargetByID(ctx, targetID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("target %d no longer exists", targetID))
	}
	if err != nil {
		return err
	}
	enabled, err := q.targetEnabled(ctx, *t)
	if err != nil {
		return err // the database did not answer: retried, not dropped
	}
	if !enabled {
		return river.JobCancel(fmt.Errorf("target %s is disabled", t.TargetCode))
	}
	// One job per host at a time, across every process: a second one
	// would only wait for the first one's turns at the host while a worker
	// could serve another host. It waits in the queue instead, without
	// spending an attempt.
	site, err := st.SiteByID(ctx, t.SiteID)
	if err != nil {
		return err
	}
	if host := fetch.SiteHost(*site); host != "" {
		release, ok, err := st.TryLockHostWork(ctx, host)
		if err != nil {
			return err
		}
		if !ok {
			return river.JobSnooze(hostBusyWait + rand.N(hostBusyWait))
		}
		defer release()
	}
	// River ends a job's context with a cause of its own (its stop, a
	// cancel from another process, the job timeout), and net/http reports
	// that cause instead of context.Canceled: the crawl and the fetcher
	// would take our own stop for the site failing — the link marked
	// failed for an hour, the host charged an error. The crawl gets a
	// context that ends plainly, as a Ctrl-C's does, when River's ends.
	crawlCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	drain := make(chan struct{})
	budget := time.AfterFunc(q.opts.Budget, func() { close(drain) })
	go func() {
		select {
		case <-q.drain:
			if budget.Stop() {
				close(drain)
			}
		case <-drain:
		}
	}()
	defer func() {
		if budget.Stop() {
			close(drain)
		}
	}()
	b := q.opts.Bundle
	if q.opts.CurrentBundle != nil {
		b = q.opts.CurrentBundle(ctx)
	}
	// A crawl that meets a database that does not answer waits for it as
	// long as the process runs (StoreWait < 0) and goes on.
	c := &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: q.opts.Fetch, Bundle: b, Cards: q.opts.Cards,
		Drain: drain, SkipRechecks: true, StoreWait: -1, Log: q.log().With("target", t.TargetCode)}
	// One list walk per job: a job taken up again after its budget ran
	// out (or its worker stopped) goes on with the links its walk found.
	created := row.CreatedAt
	c.WalkedSince = &created
	var res crawl.Result
	if kind == KindRecheck {
		res = c.RecheckTarget(crawlCtx, *t)
	} else {
		res = c.CrawlTarget(crawlCtx, *t)
	}
	if ctx.Err() != nil && res.Err != nil {
		// The job's time ran out (or the process is stopping) while a
		// request waited for the host or was under way: that is the
		// budget, not a failure of the target. It goes on later.
		res.Interrupted = true
	}
	if store.IsUnavailable(res.Err) {
		// The crawl stopped waiting for the database (its time ran out):
		// the run is recorded, and the job taken up again, once the
		// database answers.
		res.Interrupted = true
		if err := q.waitForStore(ctx, res.Err); err != nil {
			return err
		}
	}
	if q.opts.OnResult != nil {
		wait := time.Duration(0)
		if row.AttemptedAt != nil {
			wait = row.AttemptedAt.Sub(row.ScheduledAt)
		}
		q.opts.OnResult(context.WithoutCancel(ctx), kind, *t, res, wait)
	}
	return jobOutcome(res, time.Now())
}

// jobOutcome maps a target's result to what River does with its job.
func jobOutcome(res crawl.Result, now time.Time) error {
	if res.Err == nil {
		return nil
	}
	if store.IsUnavailable(res.Err) {
		// Our database failed, not the site: go on at once, never on the
		// failing sites' back-off.
		return river.JobSnooze(continueAfter)
	}
	var blocked *fetch.BlockedError
	if errors.As(res.Err, &blocked) {
		if blocked.Cause == fetch.BlockCaptcha {
			return river.JobCancel(res.Err)
		}
		wait := blocked.Until.Sub(now)
		if wait < continueAfter {
			wait = continueAfter
		}
		return river.JobSnooze(wait)
	}
	var robots *fetch.RobotsError
	if errors.As(res.Err, &robots) && robots.Unreachable {
		// robots.txt could not be read: the host is closed for now, not
		// for good. A failure like any other, retried no sooner than the
		// host's backoff allows (retryPolicy); by then the fetcher asks
		// for the file again.
		return res.Err
	}
	if fetch.IsHostStop(res.Err) {
		return river.JobCancel(res.Err)
	}
	if res.Interrupted {
		return river.JobSnooze(continueAfter)
	}
	return res.Err
}

// waitForStore waits, as long as the process is not stopping, for the
// database that failed with cause to answer again.
func (q *Queue) waitForStore(ctx context.Context, cause error) error {
	// Not the job's context: its time may run out while the database is
	// away, and what the job did is recorded only once it is back.
	waitCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-q.drain:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	q.log().Warn("the database does not answer: the job waits for it and then goes on", "err", cause)
	waited, err := q.opts.Store.WaitAvailable(waitCtx, 0, cause)
	if err != nil {
		return fmt.Errorf("the database did not answer for %s, and the process is stopping: %v", waited.Round(time.Second), cause)
	}
	q.log().Info("the database answers again: the job goes on", "waited", waited.Round(time.Millisecond))
	return nil
}

// targetEnabled reports whether t, its site and its site department are
// all enabled.
func (q *Queue) targetEnabled(ctx context.Context, t model.Target) (bool, error) {
	if !t.Enabled {
		return false, nil
	}
	list, err := q.opts.Store.ListTargets(ctx, store.TargetFilter{TargetCode: t.TargetCode, EnabledOnly: true})
	if err != nil {
		return false, err
	}
	return len(list) == 1, nil
}

// retryPolicy spaces the retries of a failed job: 5 min, 10, 20 … up to 6 h
// (a job its dead worker left behind goes on after a second),
// and never before the host may be asked again (its backoff or breaker), so
// a retry does not knock at a host that is resting.
type retryPolicy struct {
	st *store.Store
	// rescueAfter is River's RescueStuckJobsAfter: how long after its
	// attempt began a running job is taken for a dead worker's.
	rescueAfter time.Duration
}

func (p *retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	now := time.Now()
	wait := 5 * time.Minute
	for i := 1; i < job.Attempt && wait < 6*time.Hour; i++ {
		wait *= 2
	}
	wait = min(wait, 6*time.Hour)
	if p.rescued(job, now) {
		// The worker died under it: nothing failed, go on at once.
		wait = continueAfter
	}
	next := now.Add(wait)
	if until := p.hostFreeAt(job); until.After(next) {
		next = until
	}
	return next
}

// rescued reports whether River asks about a job its rescuer is taking
// back from a worker that stopped answering (killed, crashed, cut off),
// rather than one whose work failed. River calls the policy before it
// records the attempt's error, so the row cannot say; but the rescuer only
// takes jobs whose attempt began longer ago than rescueAfter, and a live
// job has ended long before that (its context ends at the job timeout).
func (p *retryPolicy) rescued(job *rivertype.JobRow, now time.Time) bool {
	return p.rescueAfter > 0 && job.AttemptedAt != nil && now.Sub(*job.AttemptedAt) >= p.rescueAfter
}

// hostFreeAt is when the host of the job's target may be asked again
// (zero when it is free or unknown).
func (p *retryPolicy) hostFreeAt(job *rivertype.JobRow) time.Time {
	if p.st == nil || (job.Kind != KindCrawl && job.Kind != KindRecheck) {
		return time.Time{}
	}
	var a struct {
		TargetID int64 `json:"target_id"`
	}
	if err := jsonUnmarshal(job.EncodedArgs, &a); err != nil {
		return time.Time{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t, err := p.st.TargetByID(ctx, a.TargetID)
	if err != nil {
		return time.Time{}
	}
	site, err := p.st.SiteByID(ctx, t.SiteID)
	if err != nil {
		return time.Time{}
	}
	hs, err := p.st.GetHostState(ctx, fetch.SiteHost(*site))
	if err != nil {
		return time.Time{}
	}
	var free time.Time
	for _, u := range []*time.Time{hs.BackoffUntil, hs.BreakerUntil} {
		if u != nil && u.After(free) {
			free = *u
		}
	}
	return free
}

// alertCheckWorker evaluates the alert rules and queues one delivery per
// message.
type alertCheckWorker struct {
	river.WorkerDefaults[AlertCheckArgs]
	q *Queue
}

func (w *alertCheckWorker) Work(ctx context.Context, job *river.Job[AlertCheckArgs]) error {
	a := w.q.opts.Alerter
	_, evalErr := a.Evaluate(ctx, time.Now())
	// Queue what this evaluation claimed (all of it, or what it claimed
	// before it failed) together with what an earlier one claimed and never
	// queued: its process died in between, since the claims and River's
	// jobs cannot share a transaction. A message queued already is skipped
	// as a duplicate, so none goes out twice.
	ns, err := a.Unqueued(ctx)
	if err != nil {
		return errors.Join(evalErr, err)
	}
	ctx = context.WithoutCancel(ctx)
	for _, n := range ns {
		if _, err := w.q.jobs.Insert(ctx, NotifyArgs{Notification: n}, nil); err != nil {
			return errors.Join(evalErr, fmt.Errorf("queue alert %s for %s: %w", n.Key, n.Webhook, err))
		}
	}
	return errors.Join(evalErr, a.Queued(ctx, ns))
}

func (w *alertCheckWorker) Timeout(*river.Job[AlertCheckArgs]) time.Duration { return time.Minute }

// sealWorker seals the ledgers of the days that are over.
type sealWorker struct {
	river.WorkerDefaults[SealArgs]
	q *Queue
}

func (w *sealWorker) Work(ctx context.Context, _ *river.Job[SealArgs]) error {
	return w.q.opts.Seal(ctx)
}

func (w *sealWorker) Timeout(*river.Job[SealArgs]) time.Duration { return 10 * time.Minute }

// notifyWorker sends one message; River retries it when the webhook fails
// in a way worth retrying.
type notifyWorker struct {
	river.WorkerDefaults[NotifyArgs]
	q *Queue
}

// Work sends the message once, or again marked as a re-delivery.
//
// A chat group cannot tell a message from its repeat, and no process can
// record "sent" in the same instant the group receives it: a kill between
// the two leaves an attempt whose message may have arrived. Each attempt
// that failed in a way that proves the message did not arrive (a refusal,
// or never posted) records its error with notSentMark; any other earlier
// attempt — one River took back from a dead worker, one that got no answer
// — may have reached the group, so the message goes out again marked as a
// re-delivery. A message is thus never lost, and never repeated unmarked.
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[NotifyArgs]) error {
	n := job.Args.Notification
	if mayHaveArrived(job.JobRow) {
		n = n.AsRedelivery()
	}
	err := w.q.opts.Alerter.Send(ctx, n)
	var de *alert.DeliveryError
	if errors.As(err, &de) && de.NotSent {
		err = fmt.Errorf("%s%w", notSentMark, err)
	}
	if err != nil && !alert.Retryable(err) {
		return river.JobCancel(err)
	}
	return err
}

// notSentMark begins the recorded error of a delivery attempt that
// certainly did not reach the group.
const notSentMark = "not sent: "

// mayHaveArrived reports whether an earlier attempt of the delivery job may
// have reached the group: one that began and whose error does not prove
// otherwise (a dead worker's attempt has its rescuer's error, or none yet).
func mayHaveArrived(row *rivertype.JobRow) bool {
	if row.Attempt <= 1 {
		return false
	}
	proven := 0
	for _, e := range row.Errors {
		if !strings.HasPrefix(e.Error, notSentMark) {
			return true
		}
		proven++
	}
	// Fewer recorded errors than earlier attempts: one ended without
	// a word.
	return proven < row.Attempt-1
}

func (w *notifyWorker) Timeout(*river.Job[NotifyArgs]) time.Duration { return time.Minute }

// NextRetry gives alert messages their own schedule: a group should hear
// of a problem soon after a short outage of its webhook, not on the crawl
// jobs' 5 minutes and more.
func (w *notifyWorker) NextRetry(job *river.Job[NotifyArgs]) time.Time {
	return time.Now().Add(notifyRetryWait(job.Attempt, w.q.opts.AlertRetry))
}

// notifyRetryWait is the wait after a message's attempt failed: first
// (default DefaultAlertRetry) after the first attempt, doubling with each
// attempt, at most an hour.
func notifyRetryWait(attempt int, first time.Duration) time.Duration {
	if first <= 0 {
		first = DefaultAlertRetry
	}
	wait := first
	for i := 1; i < attempt && wait < time.Hour; i++ {
		wait *= 2
	}
	return min(wait, time.Hour)
}
