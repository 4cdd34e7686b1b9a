package crawl

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestRunRecord: the outcome a run is recorded with is what the operator
// would call it. Articles that failed make a failed run even when the lists
// were read (a redesigned detail page); a column robots.txt forbids is
// blocked, not failed; a stopped run is interrupted; a target the run
// never reached leaves no record.
func TestRunRecord(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	target := model.Target{ID: 7, TargetCode: "lianzhou_zcwj"}
	started := Result{TargetCode: "lianzhou_zcwj", Started: t0, Finished: t0.Add(time.Minute), Pages: 2, Created: 5, Bytes: 1234}
	with := func(f func(r *Result)) Result { r := started; f(&r); return r }
	cases := []struct {
		name    string
		r       Result
		outcome string
		errHas  string
	}{
		{"clean", started, store.RunOK, ""},
		{"the target failed", with(func(r *Result) { r.Err = errors.New("list page answered HTTP 503") }), store.RunFailed, "HTTP 503"},
		{"every article failed", with(func(r *Result) {
			r.Failed = 12
			r.Problems = []string{"a: no body", "b: no body", "c: no body", "d: no body"}
		}), store.RunFailed, "12 articles failed; a: no body; b: no body; c: no body; … 1 more problems"},
		{"robots.txt forbids the column", with(func(r *Result) { r.Blocked = "robots.txt disallows /zcwj/" }), store.RunBlocked, "disallows"},
		{"stopped", with(func(r *Result) { r.Err = fmt.Errorf("walk: %w", ErrInterrupted); r.Interrupted = true }), store.RunInterrupted, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, ok := RunRecord(target, c.r, "worker-1")
			if !ok {
				t.Fatal("a started target was not recorded")
			}
			if run.Outcome != c.outcome || run.TargetID != 7 || run.Runner != "worker-1" {
				t.Errorf("recorded %+v, want outcome %s for target 7 by worker-1", run, c.outcome)
			}
			if c.errHas == "" && run.Error != "" || !strings.Contains(run.Error, c.errHas) {
				t.Errorf("error text %q, want it to say %q", run.Error, c.errHas)
			}
			if !run.StartedAt.Equal(t0) || !run.FinishedAt.Equal(t0.Add(time.Minute)) || run.Pages != 2 || run.Created != 5 || run.Bytes != 1234 {
				t.Errorf("counts and times not carried over: %+v", run)
			}
		})
	}
	never := Result{TargetCode: "lianzhou_zcwj", Err: ErrInterrupted, Interrupted: true}
	if _, ok := RunRecord(target, never, "cli"); ok {
		t.Error("a target the run never started was recorded as a run")
	}
}
