package crawl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// RunRecord turns what one target's crawl did into the row target_run
// keeps. ok is false for a target the run never started (it was stopped
// before reaching it): there is no run to record.
//
// The outcome follows ExitCode: a target whose articles failed, or wait
// for a retry, has failed even when its lists were read, a column robots.txt forbids is blocked,
// not failed, and being stopped is neither.
func RunRecord(t model.Target, r Result, runner string) (run store.TargetRun, ok bool) {
	if r.Started.IsZero() {
		return store.TargetRun{}, false
	}
	run = store.TargetRun{
		TargetID: t.ID, Runner: runner, StartedAt: r.Started, FinishedAt: r.Finished,
		Created: r.Created, Updated: r.Updated, Unchanged: r.Unchanged, Failed: r.Failed,
		Pages: r.Pages, Bytes: max(r.Bytes, 0),
	}
	if run.FinishedAt.Before(run.StartedAt) {
		run.FinishedAt = run.StartedAt
	}
	switch {
	case r.Interrupted:
		run.Outcome = store.RunInterrupted
	case r.Err != nil || r.Failed > 0 || len(r.Problems) > 0 || r.Retrying > 0:
		run.Outcome = store.RunFailed
		run.Error = runError(r)
	case r.Blocked != "":
		run.Outcome = store.RunBlocked
		run.Error = r.Blocked
	default:
		run.Outcome = store.RunOK
	}
	return run, true
}

// runError says why a run failed: the target's own error first, then how
// many articles failed and the first problems.
func runError(r Result) string {
	var parts []string
	if r.Err != nil && !errors.Is(r.Err, ErrInterrupted) {
		parts = append(parts, r.Err.Error())
	}
	if r.Failed > 0 || len(r.Problems) > 0 {
		s := fmt.Sprintf("%d articles failed", r.Failed)
		for i, p := range r.Problems {
			if i == 3 {
				s += fmt.Sprintf("; … %d more problems", len(r.Problems)-3)
				break
			}
			s += "; " + p
		}
		parts = append(parts, s)
	}
	if r.Retrying > 0 {
		parts = append(parts, fmt.Sprintf("%d articles wait for a retry", r.Retrying))
	}
	return strings.Join(parts, " — ")
}

// RecordRun stores the run of target t that r describes (see RunRecord);
// a target the run never reached is not recorded. runner names who ran
// it: "cli" for the crawl and demo commands, a worker's id under serve.
func RecordRun(ctx context.Context, st *store.Store, t model.Target, r Result, runner string) error {
	run, ok := RunRecord(t, r, runner)
	if !ok {
		return nil
	}
	// A stopping run still records how far it got.
	return st.RecordTargetRun(context.WithoutCancel(ctx), &run)
}
