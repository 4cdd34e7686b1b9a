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
		p := &retryPolicy{st: st, stuckAfter: 30 * time.Minute}
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
		{"robots.txt unreachable", crawl.Result{Err: &fetch.RobotsError{Why: "robots.txt unreachable", Unreachable: true}}, "cancel"},
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
