package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// A working queue registers its process in the database and beats every
// heartbeatEvery; every process also sweeps: a process whose beat is older
// than deadAfter is taken for dead, and the running jobs its River client
// attempted go back to the queue at once, for any process to take up. River's
// own rescuer, which waits for the job timeout, stays as the last resort.
//
// Never two at once: a process taken for dead may only be paused (SIGSTOP,
// a stalled VM) or cut off, and come back. Its jobs then still hold their
// host's work lock (store.TryLockHostWork: on PostgreSQL a session advisory
// lock that the server keeps while the session's connection is open, paused
// or not; it goes when the process dies and the kernel closes its socket),
// so the job taken back waits (snoozes, not spending an attempt) until the
// original lets go, and no host ever has two jobs at work. What the late
// original writes is harmless: River records an outcome only on a row still
// running, and whichever attempt runs second goes on from the frontier the
// first one left, so nothing is fetched twice or lost.
const (
	heartbeatEvery = 5 * time.Second
	deadAfter      = 30 * time.Second
)

// register records this process before it takes its first job.
func (q *Queue) register(ctx context.Context) error {
	host, _ := os.Hostname()
	return q.opts.Store.RegisterServeProcess(ctx, q.jobs.ID(), host, os.Getpid())
}

// keepAlive beats and sweeps until stop closes.
func (q *Queue) keepAlive(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	id, log := q.jobs.ID(), q.log()
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	// streak is since when this process has beaten without a gap. It
	// sweeps only once that covers deadAfter: after a database outage
	// (or a pause of its own) every beat is old, and the others need a
	// beat's time to show they live.
	last := time.Now()
	streak := last
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		alive, err := q.opts.Store.BeatServeProcess(ctx, id)
		if err == nil && !alive {
			log.Warn("queue: this process was taken for dead (it did not beat in time); its running jobs were handed back and wait for its host locks", "process", id)
			err = q.register(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("queue: heartbeat failed", "process", id, "err", err)
			}
			streak = time.Time{}
			continue
		}
		if streak.IsZero() || now.Sub(last) > deadAfter/2 {
			streak = now
		}
		last = now
		if now.Sub(streak) >= deadAfter {
			q.sweep(ctx)
		}
	}
}

// sweep takes back the jobs of the processes that stopped beating.
func (q *Queue) sweep(ctx context.Context) {
	me, log := q.jobs.ID(), q.log()
	dead, err := q.opts.Store.ClaimDeadServeProcesses(ctx, me, deadAfter)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("queue: look for dead processes", "err", err)
		}
		return
	}
	for _, id := range dead {
		n, err := q.takeBack(ctx, func(j *rivertype.JobRow) bool {
			return len(j.AttemptedBy) > 0 && j.AttemptedBy[len(j.AttemptedBy)-1] == id
		}, fmt.Sprintf("taken back: serve process %s stopped beating", id))
		if err != nil {
			// The claim lapses after deadAfter and a sweep tries again.
			log.Warn("queue: take back the jobs of a dead process", "process", id, "err", err)
			continue
		}
		log.Warn("queue: took back the running jobs of a serve process that stopped beating", "process", id, "jobs", n, "by", me)
		if err := q.opts.Store.ForgetServeProcess(ctx, id, me); err != nil {
			log.Warn("queue: forget a dead process", "process", id, "err", err)
		}
	}
}

// takeBack hands the running jobs that pick selects back to the queue, with
// River's own rescue (what its rescuer does after the job timeout), each at
// its old place in the queue. Each job is taken back only in the attempt the
// list saw: one that finished and started again meanwhile is left alone.
// A death is not the job failing: no attempt is charged against the site
// (no back-off, no run recorded), and a job whose attempts the deaths used
// up is given one more (River's retry of a discarded job), so kills alone
// never make a crawl give up. It returns how many it took back.
func (q *Queue) takeBack(ctx context.Context, pick func(*rivertype.JobRow) bool, reason string) (int, error) {
	list, err := q.jobs.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRunning).First(10000))
	if err != nil {
		return 0, fmt.Errorf("jobs left running: %w", err)
	}
	n := 0
	for _, j := range list.Jobs {
		if !pick(j) || j.AttemptedAt == nil {
			continue
		}
		now := time.Now().UTC()
		state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
		if j.Attempt >= j.MaxAttempts {
			state, finalized = rivertype.JobStateDiscarded, &now
		}
		msg, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: reason})
		if err != nil {
			return n, err
		}
		if err := q.rescue(ctx, &riverdriver.JobRescueManyParams{
			ID: []int64{j.ID}, Error: [][]byte{msg}, FinalizedAt: []*time.Time{finalized},
			ScheduledAt: []time.Time{j.ScheduledAt}, State: []string{string(state)},
			// Only the attempt listed: River updates a row still running
			// whose attempt began before this.
			StuckHorizon: j.AttemptedAt.Add(time.Millisecond),
		}); err != nil {
			return n, fmt.Errorf("take back job %d: %w", j.ID, err)
		}
		if taken, err := q.jobs.JobGet(ctx, j.ID); err != nil || !tookBack(taken, j.Attempt, reason) {
			continue // it ended (or was taken back by another) meanwhile
		}
		if state == rivertype.JobStateDiscarded {
			if _, err := q.jobs.JobRetry(ctx, j.ID); err != nil {
				return n, fmt.Errorf("take back job %d: %w", j.ID, err)
			}
		}
		n++
	}
	return n, nil
}

// tookBack reports whether row's last recorded error is the take-back of
// its attempt with reason.
func tookBack(row *rivertype.JobRow, attempt int, reason string) bool {
	if row == nil || row.State == rivertype.JobStateRunning || len(row.Errors) == 0 {
		return false
	}
	last := row.Errors[len(row.Errors)-1]
	return last.Attempt == attempt && last.Error == reason
}
