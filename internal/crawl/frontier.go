package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zhizhi/internal/adapter"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// A target's crawl has two halves. The walk reads its list pages and
// records every article link in the frontier before any is fetched; the
// work fetches the links that are due: never fetched, failed and due for a
// retry, and stored articles due for a re-check. Both live in the database,
// so a run stopped anywhere loses nothing: the next walk goes on past the
// links an unfinished walk recorded, and the next work takes what is due.

// Retry backoff of a failed link. A passing fault of the site (5xx, 429,
// the connection failing, an attachment failing so) is tried again soon:
// 5 min after the first failure, then 10, 20 and 40 min, then on the slow
// ladder from 1 h. Any other failure (the page does not parse, a 403, a
// body over the size limit …) will not mend itself in minutes: it goes
// straight to the slow ladder, 1 h after the first failure, doubling with
// each further one, at most 7 days. Either way the request still waits for
// the host's limiter and backoff: a retry is never asked sooner than the
// host allows.
const (
	RetryBase = time.Hour
	RetryMax  = 7 * 24 * time.Hour
	// TransientRetryBase is the first wait after a passing fault;
	// TransientRetrySteps waits (doubling) come before the slow ladder.
	TransientRetryBase  = 5 * time.Minute
	TransientRetrySteps = 4
	// DisallowedRecheck is when a link robots.txt forbade is looked at
	// again: a robots.txt is cached for at most a day.
	DisallowedRecheck = 24 * time.Hour
)

// RetryIn is the wait after a link failed for the (failures)th time in a
// row: RetryBase·2^(failures−1), at most RetryMax.
func RetryIn(failures int) time.Duration {
	d := RetryBase
	for i := 1; i < failures && d < RetryMax; i++ {
		d *= 2
	}
	return min(d, RetryMax)
}

// TransientRetryIn is the wait after a link failed for a passing reason
// for the (failures)th time in a row: TransientRetryBase·2^(failures−1)
// for the first TransientRetrySteps failures, then RetryIn of the
// failures after them.
func TransientRetryIn(failures int) time.Duration {
	if failures <= TransientRetrySteps {
		return TransientRetryBase << max(failures-1, 0)
	}
	return RetryIn(failures - TransientRetrySteps)
}

// walk is one list walk of a target in progress.
type walk struct {
	rec          *store.Walk
	lastFinished int64 // links discovered by this walk or before are settled
	pages        int
	done         bool
}

// startWalk records the start of the target's list walk.
func (j *job) startWalk(ctx context.Context) error {
	rec, last, err := j.c.Store.StartWalk(ctx, j.target.ID, j.c.Full)
	if err != nil {
		return err
	}
	j.walk = &walk{rec: rec, lastFinished: last}
	return nil
}

// discover records one list page's links in the frontier and reports
// whether the page ends the walk: every link on it was settled by a walk
// that finished (never on a full walk).
func (j *job) discover(ctx context.Context, page int, items []adapter.ListItem) (settled bool, err error) {
	j.walk.pages = max(j.walk.pages, page)
	var recs []store.Discovered
	for _, item := range items {
		norm, hash, err := extract.URLHash(item.URL)
		if err != nil {
			j.fail("%s: %v", item.URL, err)
			j.count(model.StatusFailed)
			continue
		}
		item.URL = norm
		raw, err := json.Marshal(item)
		if err != nil {
			return false, fmt.Errorf("list item %s: %w", norm, err)
		}
		recs = append(recs, store.Discovered{URL: norm, URLHash: hash, NativePostID: item.NativePostID, Item: raw})
	}
	walks, err := j.c.Store.Discover(ctx, j.target.ID, j.walk.rec.ID, recs)
	if err != nil {
		return false, err
	}
	if err := j.c.Store.WalkReached(ctx, j.walk.rec.ID, page); err != nil {
		return false, err
	}
	settled = len(recs) > 0 && j.walk.lastFinished > 0 && !j.c.Full
	for _, r := range recs {
		w := walks[r.URLHash]
		if w > j.walk.lastFinished {
			settled = false
		}
		if w == j.walk.rec.ID {
			j.res.Discovered++
		}
	}
	return settled, nil
}

// finishWalk records that the walk finished (reached: end, known, limit).
func (j *job) finishWalk(ctx context.Context, reached string) error {
	j.walk.done = true
	j.res.Walk = reached
	return j.c.Store.FinishWalk(ctx, j.walk.rec.ID, reached)
}

// endWalk closes a walk that did not finish: the next walk goes on past the
// links this one recorded.
func (j *job) endWalk(ctx context.Context, cause error) {
	if j.walk == nil || j.walk.done {
		return
	}
	reason := "stopped"
	if cause != nil {
		reason = cause.Error()
	}
	if err := j.c.Store.StopWalk(context.WithoutCancel(ctx), j.walk.rec.ID, reason); err != nil {
		j.c.log().Warn("record unfinished list walk", "target", j.target.TargetCode, "err", err)
	}
}

// work fetches the target's due links, then (unless the crawler leaves
// them to their own jobs) re-checks its stored articles that are due. It
// returns only what stops the target (host stop, interruption, the store
// failing).
func (j *job) work(ctx context.Context) error {
	if j.parse == nil {
		return nil
	}
	done := map[int64]bool{}
	if err := j.drain(ctx, done, j.c.Store.DueFrontier); err != nil {
		return err
	}
	if j.c.SkipRechecks {
		return nil
	}
	return j.recheck(ctx, done)
}

// retry fetches the target's failed links whose retry is due, skipping the
// links in done.
func (j *job) retry(ctx context.Context, done map[int64]bool) error {
	return j.drain(ctx, done, j.c.Store.DueRetries)
}

// drain fetches, a batch at a time, the links next says are due, skipping
// (and adding to) done, until a batch brings nothing new.
func (j *job) drain(ctx context.Context, done map[int64]bool,
	next func(ctx context.Context, targetID int64, now time.Time, limit int) ([]store.FrontierEntry, error)) error {
	const batch = 200
	for {
		if j.c.draining() {
			return ErrInterrupted
		}
		due, err := next(ctx, j.target.ID, j.c.now(), batch)
		if err != nil {
			return err
		}
		progressed := false
		for i := range due {
			e := &due[i]
			if done[e.ID] {
				continue
			}
			if j.c.draining() {
				return ErrInterrupted
			}
			done[e.ID] = true
			progressed = true
			if err := j.processEntry(ctx, e); err != nil {
				return err
			}
		}
		if !progressed {
			return nil
		}
	}
}

// recheck revalidates the target's stored articles whose next check is due
// (conditional requests), skipping the links in done.
func (j *job) recheck(ctx context.Context, done map[int64]bool) error {
	limit := j.c.MaxRechecks
	if limit <= 0 {
		limit = 200
	}
	rechecks, err := j.c.Store.DueRechecks(ctx, j.target.ID, j.c.now(), limit)
	if err != nil {
		return err
	}
	for i := range rechecks {
		e := &rechecks[i]
		if done[e.ID] {
			continue
		}
		if j.c.draining() {
			return ErrInterrupted
		}
		done[e.ID] = true
		if err := j.processEntry(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// processEntry fetches one frontier link with the list item it was found
// with.
func (j *job) processEntry(ctx context.Context, e *store.FrontierEntry) error {
	item := adapter.ListItem{URL: e.URL, NativePostID: e.NativePostID}
	if len(e.Item) > 0 {
		if err := json.Unmarshal(e.Item, &item); err != nil || item.URL == "" {
			item = adapter.ListItem{URL: e.URL, NativePostID: e.NativePostID}
		}
	}
	return j.processItem(ctx, e, item, j.parse)
}

// Error classes of failed links.
const (
	classNetwork  = "network"
	classHTTP     = "http"
	classTooLarge = "too_large"
	classDecode   = "decode"
	classParse    = "parse"
	classContent  = "content"
	classStore    = "store"
)

// failedMark is the frontier mark of a failed attempt; transient says the
// fault is a passing one (5xx, 429, the network), retried within minutes.
func (j *job) failedMark(e *store.FrontierEntry, class, msg string, transient bool) store.FrontierMark {
	attempts := 0
	if e != nil {
		attempts = e.Attempts
	}
	wait := RetryIn(attempts + 1)
	if transient {
		wait = TransientRetryIn(attempts + 1)
	}
	next := j.c.now().Add(wait)
	return store.FrontierMark{State: store.FrontierFailed, ErrorClass: class, Error: msg, NextAttemptAt: &next, Attempt: true}
}

// markEntry records what an attempt at a link came to. Recording is kept
// even when the run's context has ended: the attempt happened.
func (j *job) markEntry(ctx context.Context, e *store.FrontierEntry, m store.FrontierMark) error {
	if e == nil || e.ID == 0 {
		return nil
	}
	if err := j.c.Store.MarkFrontier(context.WithoutCancel(ctx), e.ID, m); err != nil {
		return fmt.Errorf("record attempt at %s: %w", e.URL, err)
	}
	return nil
}

// fetchFailure classifies a failed detail fetch for the frontier.
func (j *job) fetchFailure(e *store.FrontierEntry, resp *fetch.Response, err error) store.FrontierMark {
	if fetch.IsRobotsDisallowed(err) {
		next := j.c.now().Add(DisallowedRecheck)
		return store.FrontierMark{State: store.FrontierDisallowed, ErrorClass: "robots", Error: err.Error(), NextAttemptAt: &next}
	}
	if resp != nil && (resp.Status == 404 || resp.Status == 410) {
		return store.FrontierMark{State: store.FrontierGone, ErrorClass: classHTTP, Error: err.Error(), Attempt: true}
	}
	var big *fetch.ErrTooLarge
	switch {
	case errors.As(err, &big):
		return j.failedMark(e, classTooLarge, err.Error(), false)
	case resp != nil && resp.Status != 0:
		return j.failedMark(e, classHTTP, err.Error(), resp.Status == 429 || resp.Status >= 500)
	}
	return j.failedMark(e, classNetwork, err.Error(), true)
}
