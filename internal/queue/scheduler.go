package queue

import (
	"context"
	"encoding/json"
	"zhizhi/internal/config/zone"

	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/robfig/cron/v3"

	"zhizhi/internal/store"
)

// DefaultTimeZone is the zone in which schedule_cron is read unless the
// operator names another (the portals publish on Beijing time).
const DefaultTimeZone = zone.Default

// catchUpWindow bounds how far back the scheduler looks for a missed slot:
// a target whose last run is older still gets its one catch-up run.
const catchUpWindow = 31 * 24 * time.Hour

// Scheduler turns each enabled target's schedule_cron into crawl jobs, and
// due re-checks and due retries of failed links into re-check jobs. It keeps no state of its own: the slot a
// target was last queued for is in the database, so whichever process holds
// River's leadership can run it, and a restart neither loses nor repeats a
// slot.
type Scheduler struct {
	Store    *store.Store
	Jobs     jobClient
	Location *time.Location
	Now      func() time.Time
	Log      *slog.Logger
}

// TickResult says what one tick did.
type TickResult struct {
	Crawls    []string // target codes whose crawl was queued
	Rechecks  []string // target codes whose re-check was queued
	Retries   []string // target codes queued (a re-check job) for their failed links whose retry is due
	Cancelled int      // queued jobs of disabled or removed targets
	Problems  []string // targets with a schedule that does not parse
}

// Tick queues the crawls whose slot has come since the target was last
// queued or crawled (one job however many slots were missed), queues the
// re-checks that are due, and cancels the queued jobs of targets that are
// disabled or gone.
func (s *Scheduler) Tick(ctx context.Context) (TickResult, error) {
	var res TickResult
	now := s.now()
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	scheds, err := s.Store.ListSchedules(ctx)
	if err != nil {
		return res, err
	}
	enabled := map[int64]bool{}
	codes := map[int64]string{}
	for _, ts := range interleaveSites(scheds) {
		codes[ts.ID] = ts.Code
		if !ts.Enabled {
			continue
		}
		enabled[ts.ID] = true
		slot, reason, due, err := dueSlot(ts, now, loc)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", ts.Code, err))
			continue
		}
		if !due {
			continue
		}
		args := CrawlArgs{TargetID: ts.ID, TargetCode: ts.Code, Reason: reason, Slot: &slot}
		if _, err := s.Jobs.Insert(ctx, args, nil); err != nil {
			return res, fmt.Errorf("queue crawl of %s: %w", ts.Code, err)
		}
		// After the insert: a crash in between re-inserts next tick, which
		// the per-target uniqueness turns into nothing.
		if err := s.Store.SetScheduleSlot(ctx, ts.ID, slot); err != nil {
			return res, err
		}
		res.Crawls = append(res.Crawls, ts.Code)
	}
	// A failed link whose retry has come is fetched by the target's
	// re-check job, at the priority of a scheduled crawl: an article known
	// to be missing is not left for the next cron slot, nor behind every
	// re-check of what is stored.
	retries, err := s.Store.TargetsWithDueRetries(ctx, now)
	if err != nil {
		return res, err
	}
	retrying := map[int64]bool{}
	for _, id := range retries {
		if !enabled[id] {
			continue
		}
		retrying[id] = true
		r, err := s.Jobs.Insert(ctx, RecheckArgs{TargetID: id, TargetCode: codes[id]}, &river.InsertOpts{Priority: PrioritySchedule})
		if err != nil {
			return res, fmt.Errorf("queue retries of %s: %w", codes[id], err)
		}
		if !r.UniqueSkippedAsDuplicate {
			res.Retries = append(res.Retries, codes[id])
		}
	}
	due, err := s.Store.TargetsWithDueRechecks(ctx, now)
	if err != nil {
		return res, err
	}
	for _, id := range due {
		if retrying[id] {
			continue // its job does the re-checks too
		}
		if !enabled[id] {
			continue
		}
		r, err := s.Jobs.Insert(ctx, RecheckArgs{TargetID: id, TargetCode: codes[id]}, nil)
		if err != nil {
			return res, fmt.Errorf("queue re-check of %s: %w", codes[id], err)
		}
		if !r.UniqueSkippedAsDuplicate {
			res.Rechecks = append(res.Rechecks, codes[id])
		}
	}
	n, err := cancelJobsOf(ctx, s.Jobs, func(id int64) bool { return !enabled[id] })
	res.Cancelled = n
	if err != nil {
		return res, err
	}
	if len(res.Crawls)+len(res.Rechecks)+len(res.Retries)+res.Cancelled > 0 {
		s.log().Info("schedule", "crawls", len(res.Crawls), "rechecks", len(res.Rechecks), "retries", len(res.Retries), "cancelled", res.Cancelled)
	}
	for _, p := range res.Problems {
		s.log().Warn("schedule_cron does not parse; target not scheduled", "problem", p)
	}
	return res, nil
}

// interleaveSites orders targets round-robin over their sites: the first
// target of every site, then the second of every site … River hands out
// jobs of one priority in the order they were queued, so the workers start
// on different hosts instead of queueing behind one host's lock.
func interleaveSites(scheds []store.TargetSchedule) []store.TargetSchedule {
	rank := map[int64]int{}
	type ranked struct {
		ts   store.TargetSchedule
		rank int
	}
	rs := make([]ranked, len(scheds))
	for i, ts := range scheds {
		rs[i] = ranked{ts, rank[ts.SiteID]}
		rank[ts.SiteID]++
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].rank < rs[j].rank })
	out := make([]store.TargetSchedule, len(rs))
	for i, r := range rs {
		out[i] = r.ts
	}
	return out
}

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Scheduler) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// ParseSchedule reads a five-field cron expression in loc (a CRON_TZ=
// prefix in the expression wins).
func ParseSchedule(expr string, loc *time.Location) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if !strings.HasPrefix(expr, "CRON_TZ=") && !strings.HasPrefix(expr, "TZ=") && loc != nil {
		expr = "CRON_TZ=" + loc.String() + " " + expr
	}
	sched, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", expr, err)
	}
	return sched, nil
}

// dueSlot says whether a target's crawl is due at now and for which slot:
// the latest slot of its schedule at or before now that comes after both
// the slot it was last queued for and its last crawl. A target never
// crawled nor queued is due at once. A target without a schedule is never
// due (it is crawled only when asked).
func dueSlot(ts store.TargetSchedule, now time.Time, loc *time.Location) (slot time.Time, reason string, due bool, err error) {
	if strings.TrimSpace(ts.Cron) == "" {
		return time.Time{}, "", false, nil
	}
	sched, err := ParseSchedule(ts.Cron, loc)
	if err != nil {
		return time.Time{}, "", false, err
	}
	var base time.Time
	for _, t := range []*time.Time{ts.SlotAt, ts.LastCrawledAt} {
		if t != nil && t.After(base) {
			base = *t
		}
	}
	if base.IsZero() {
		return now, ReasonFirst, true, nil
	}
	if floor := now.Add(-catchUpWindow); base.Before(floor) {
		base = floor
	}
	next := sched.Next(base)
	if next.IsZero() || next.After(now) {
		return time.Time{}, "", false, nil
	}
	for {
		n := sched.Next(next)
		if n.IsZero() || n.After(now) {
			return next, ReasonSchedule, true, nil
		}
		next = n
	}
}

// cancelJobsOf cancels the queued (not running) crawl and re-check jobs of
// the targets drop picks.
func cancelJobsOf(ctx context.Context, jobs jobClient, drop func(targetID int64) bool) (int, error) {
	params := river.NewJobListParams().Kinds(KindCrawl, KindRecheck).
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending).
		First(1000)
	n := 0
	for {
		list, err := jobs.JobList(ctx, params)
		if err != nil {
			return n, fmt.Errorf("list queued jobs: %w", err)
		}
		for _, j := range list.Jobs {
			var a struct {
				TargetID int64 `json:"target_id"`
			}
			if jsonUnmarshal(j.EncodedArgs, &a) != nil || !drop(a.TargetID) {
				continue
			}
			if _, err := jobs.JobCancel(ctx, j.ID); err != nil {
				return n, fmt.Errorf("cancel job %d: %w", j.ID, err)
			}
			n++
		}
		if len(list.Jobs) < 1000 || list.LastCursor == nil {
			return n, nil
		}
		params = params.After(list.LastCursor)
	}
}

var jsonUnmarshal = json.Unmarshal
