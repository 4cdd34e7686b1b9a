package queue

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// The retry policy as River calls it: with the row of the job as it was
// when its attempt ended, before that attempt's error is added to the row.
// The rescuer calls it for a job it found stuck (a worker that died long
// ago), the executor for a job that just returned an error.
func TestRetryPolicy(t *testing.T) {
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
