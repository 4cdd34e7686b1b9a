package queue

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// A failed crawl is retried after 5 min, 10, 20 … never more than 6 h
// apart; a job whose worker died goes on at once; and never before the
// host's backoff or breaker lets it be asked.
func TestRetryPolicy(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := &fakeClock{t: time.Now()}
		scheduleWorld(t, st, clock)
		tg := firstTarget(t, st)
		args, _ := json.Marshal(CrawlArgs{TargetID: tg.ID, TargetCode: tg.TargetCode})
		p := &retryPolicy{st: st, rescueAfter: 30 * time.Minute}
		job := func(attempt int, attemptedAgo time.Duration) *rivertype.JobRow {
			at := time.Now().Add(-attemptedAgo)
			return &rivertype.JobRow{Kind: KindCrawl, Attempt: attempt, AttemptedAt: &at, EncodedArgs: args}
		}
		for _, c := range []struct {
			attempt int
			want    time.Duration
		}{{1, 5 * time.Minute}, {2, 10 * time.Minute}, {3, 20 * time.Minute}, {7, 320 * time.Minute}, {8, 6 * time.Hour}, {20, 6 * time.Hour}} {
			before := time.Now()
			got := p.NextRetry(job(c.attempt, time.Minute)).Sub(before)
			if got < c.want || got > c.want+time.Minute {
				t.Errorf("attempt %d failed: retry in %v, want %v", c.attempt, got, c.want)
			}
		}
		// Taken back from a dead worker (its attempt began 31 min ago).
		if got := time.Until(p.NextRetry(job(1, 31*time.Minute))); got > 5*time.Second {
			t.Errorf("a rescued job retries in %v, want at once", got)
		}
		// The host is backing off for 2 h: no retry before.
		site, err := st.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		until := time.Now().Add(2 * time.Hour)
		hs := &model.HostState{Host: fetch.SiteHost(*site), ConsecutiveErrors: 3, BackoffUntil: &until}
		if err := st.PutHostHealth(ctx, hs); err != nil {
			t.Fatal(err)
		}
		if got := p.NextRetry(job(1, time.Minute)); got.Before(until.Add(-time.Millisecond)) {
			t.Errorf("retry at %v, before the host's backoff ends at %v", got, until)
		}
	})
}

// What River does with a job follows from the target's result.
func TestJobOutcome(t *testing.T) {
	now := time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	cases := []struct {
		name string
		res  crawl.Result
		want string // done, snooze:<duration>, cancel, error
	}{
		{"done", crawl.Result{}, "done"},
		{"articles failed, they wait in the frontier", crawl.Result{Failed: 3}, "done"},
		{"budget used up", crawl.Result{Err: crawl.ErrInterrupted, Interrupted: true}, "snooze:1s"},
		{"breaker open for 24 h", crawl.Result{Err: &fetch.BlockedError{Host: "h", Reason: "breaker open", Until: now.Add(24 * time.Hour)}}, "snooze:24h0m0s"},
		{"backing off 64 s", crawl.Result{Err: &fetch.BlockedError{Host: "h", Reason: "backing off", Until: now.Add(64 * time.Second)}}, "snooze:1m4s"},
		{"CAPTCHA", crawl.Result{Err: &fetch.BlockedError{Host: "h", Reason: "breaker open", Cause: fetch.BlockCaptcha, Until: now}}, "cancel"},
		{"robots.txt unreachable: retried once the host may be asked", crawl.Result{Err: &fetch.RobotsError{Why: "robots.txt unreachable", Unreachable: true}}, "error"},
		{"a list page failed", crawl.Result{Err: errors.New("list page 1: HTTP 500")}, "error"},
	}
	for _, c := range cases {
		err := jobOutcome(c.res, now)
		got := "error"
		switch {
		case err == nil:
			got = "done"
		case errors.As(err, &snooze):
			got = "snooze:" + snooze.Duration.String()
		case errors.As(err, &cancel):
			got = "cancel"
		}
		if got != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, err, c.want)
		}
	}
}

// The retry policy as River calls it: with the row of the job as it was
// when its attempt ended, before that attempt's error is added to the row.
// The rescuer calls it for a job it found stuck (a worker that died long
// ago), the executor for a job that just returned an error.
func TestRetryPolicyAsRiverCallsIt(t *testing.T) {
	q := &Queue{opts: Options{Budget: 20 * time.Minute}}
	p := q.riverConfig().RetryPolicy
	now := time.Now()
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	failed := rivertype.AttemptError{Error: "list page answered HTTP 500"}
	rescue := rivertype.AttemptError{Error: "Stuck job rescued by JobRescuer"}
	for _, c := range []struct {
		name     string
		job      rivertype.JobRow
		min, max time.Duration // from now
	}{
		{"a dead worker's job goes on at once",
			rivertype.JobRow{Attempt: 1, AttemptedAt: ago(2 * time.Hour)},
			0, time.Minute},
		{"a dead worker's job goes on at once, whatever failed before",
			rivertype.JobRow{Attempt: 3, AttemptedAt: ago(2 * time.Hour), Errors: []rivertype.AttemptError{failed, failed}},
			0, time.Minute},
		{"a first failure waits 5 minutes",
			rivertype.JobRow{Attempt: 1, AttemptedAt: ago(30 * time.Second)},
			5 * time.Minute, 6 * time.Minute},
		{"a failure after a rescue is a failure: 10 minutes for the second attempt",
			rivertype.JobRow{Attempt: 2, AttemptedAt: ago(30 * time.Second), Errors: []rivertype.AttemptError{rescue}},
			10 * time.Minute, 11 * time.Minute},
		{"a third failure waits 20 minutes",
			rivertype.JobRow{Attempt: 3, AttemptedAt: ago(time.Minute), Errors: []rivertype.AttemptError{failed, failed}},
			20 * time.Minute, 21 * time.Minute},
		{"waits stop growing at 6 hours",
			rivertype.JobRow{Attempt: 12, AttemptedAt: ago(time.Minute)},
			6 * time.Hour, 6*time.Hour + time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.job.Kind = KindCrawl
			c.job.EncodedArgs = []byte(`{"target_id":1}`)
			next := p.NextRetry(&c.job)
			if next.Before(now.Add(c.min)) || next.After(now.Add(c.max)) {
				t.Errorf("next try in %v, want %v to %v", next.Sub(now).Round(time.Second), c.min, c.max)
			}
		})
	}
}
