// Package health owns zhizhi's health report: the enabled targets that
// have gone stale (no new article for more than three times the cadence
// their column is expected to publish at), the targets whose last run
// failed, the articles waiting for a retry after a failed fetch, and the
// hosts zhizhi is not asking now, with why (backing off,
// breaker open, a CAPTCHA, robots.txt unreachable, flagged for a person to
// review). `zhizhi health`, the alerts and the metrics all read it from
// Check, so they never disagree.
package health

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// StaleFactor is how many expected cadences a column may stay quiet before
// it is stale: a weekly column is stale after three weeks without a new
// article, a monthly one after three months, so slow columns do not raise
// false alarms the way a fixed "nothing new in 24 h" would.
const StaleFactor = 3

// NeverCollectedGrace is how long after its first scheduled time an
// enabled target that has never been crawled may go before health lists it
// as 从未采集: long enough for a night's queue of polite crawls to reach it,
// short enough that a target the scheduler never picks up is seen the next
// morning.
const NeverCollectedGrace = 6 * time.Hour

// ReviewWindow is the window in which the breaker trips that flag a host
// for review are counted (the count is shown beside the flag).
const ReviewWindow = 7 * 24 * time.Hour

// Kinds of host problem, in the order a host's are listed.
const (
	HostCaptcha = "captcha"            // the site answered with a CAPTCHA: stopped until a person clears it
	HostReview  = "review"             // flagged for a person to look at (third breaker trip in 7 days, or a CAPTCHA)
	HostBreaker = "breaker"            // the breaker is open: no request until it releases
	HostRobots  = "robots_unreachable" // robots.txt could not be fetched: nothing else is asked (fail-closed)
	HostBackoff = "backoff"            // waiting after errors before the next request
)

// Report is the health of everything zhizhi watches at one moment.
type Report struct {
	At      time.Time       `json:"at"`
	Targets int             `json:"targets_checked"` // enabled targets looked at
	Stale   []StaleTarget   `json:"stale_targets"`
	Failing []FailingTarget `json:"failing_targets"`
	// Retries are the article links of enabled targets whose last fetch
	// failed, soonest retry first (at most ListedRetries of them):
	// articles missing until their retry brings them. RetriesWaiting
	// counts them all.
	Retries        []store.WaitingRetry `json:"pending_retries"`
	RetriesWaiting int                  `json:"pending_retries_total"`
	Hosts          []HostIssue          `json:"hosts"`
}

// ListedRetries bounds the articles waiting for a retry a report names.
const ListedRetries = 100

// Problems counts what the report lists: zero means all is well.
func (r Report) Problems() int {
	return len(r.Stale) + len(r.Failing) + r.RetriesWaiting + len(r.Hosts)
}

// StaleTarget is an enabled target that has been quiet too long.
type StaleTarget struct {
	TargetCode  string `json:"target_code"`
	TargetName  string `json:"target_name"`
	SiteCode    string `json:"site_code"`
	CadenceDays int    `json:"expected_cadence_days"`
	// LastArticleTime is the publication time of the newest article seen;
	// nil when none was ever collected, and QuietSince is then when the
	// target was added.
	LastArticleTime *time.Time `json:"last_article_time"`
	QuietSince      time.Time  `json:"quiet_since"`
	QuietDays       float64    `json:"quiet_days"`
	LimitDays       int        `json:"stale_after_days"` // StaleFactor × cadence
	// NeverCollected: the target has never been crawled; DueBy is its
	// first scheduled time after it was added plus NeverCollectedGrace
	// (when it was added, for a target without a schedule).
	NeverCollected bool       `json:"never_collected"`
	DueBy          *time.Time `json:"never_collected_due_by,omitempty"`
}

// FailingTarget is an enabled target whose last finished run failed.
type FailingTarget struct {
	TargetCode string          `json:"target_code"`
	TargetName string          `json:"target_name"`
	SiteCode   string          `json:"site_code"`
	Run        store.TargetRun `json:"last_run"`
}

// HostIssue is a host zhizhi is not asking freely now, with every reason.
type HostIssue struct {
	Host              string     `json:"host"`
	Kinds             []string   `json:"kinds"` // HostCaptcha, HostReview, HostBreaker, HostRobots, HostBackoff
	ConsecutiveErrors int        `json:"consecutive_errors"`
	BackoffUntil      *time.Time `json:"backoff_until,omitempty"`
	BreakerUntil      *time.Time `json:"breaker_until,omitempty"`
	BreakerTrips7d    int        `json:"breaker_trips_7d"`
	// The earliest failing robots.txt of the host's origins.
	RobotsFailingSince *time.Time `json:"robots_failing_since,omitempty"`
	RobotsError        string     `json:"robots_error,omitempty"`
}

// Has reports whether the host has a problem of kind.
func (h HostIssue) Has(kind string) bool { return slices.Contains(h.Kinds, kind) }

// IsStale is the stale rule: a column is stale when more than StaleFactor
// times its expected cadence has passed since quietSince (its newest
// article, or when it was added if it never had one). Exactly three
// cadences is not yet stale.
func IsStale(quietSince time.Time, cadenceDays int, now time.Time) bool {
	if cadenceDays <= 0 {
		return false
	}
	return now.Sub(quietSince) > time.Duration(StaleFactor*cadenceDays)*24*time.Hour
}

// Check builds the report at now from the database.
//
// A target that never yielded an article is measured from when it was
// added: a column that has shown nothing for three cadences since zhizhi
// started watching it is as quiet as one whose newest article is that old,
// while a target added yesterday gets the same grace period as any other.
func Check(ctx context.Context, st *store.Store, now time.Time) (Report, error) {
	rep := Report{At: now.UTC(), Stale: []StaleTarget{}, Failing: []FailingTarget{}, Retries: []store.WaitingRetry{}, Hosts: []HostIssue{}}
	targets, err := st.HealthTargets(ctx)
	if err != nil {
		return rep, err
	}
	rep.Targets = len(targets)
	for _, t := range targets {
		if v := Judge(t, now); v.Stale {
			rep.Stale = append(rep.Stale, StaleTarget{
				TargetCode: t.TargetCode, TargetName: t.TargetName, SiteCode: t.SiteCode, CadenceDays: t.CadenceDays,
				LastArticleTime: t.LastArticleTime, QuietSince: v.QuietSince,
				QuietDays: now.Sub(v.QuietSince).Hours() / 24, LimitDays: StaleFactor * t.CadenceDays,
				NeverCollected: v.NeverCollected, DueBy: v.DueBy,
			})
		}
		if t.LastRun != nil && t.LastRun.Outcome == store.RunFailed {
			rep.Failing = append(rep.Failing, FailingTarget{TargetCode: t.TargetCode, TargetName: t.TargetName,
				SiteCode: t.SiteCode, Run: *t.LastRun})
		}
	}
	rep.Retries, rep.RetriesWaiting, err = st.WaitingRetries(ctx, 0, ListedRetries)
	if err != nil {
		return rep, err
	}
	hosts, err := st.HostsNeedingAttention(ctx, now)
	if err != nil {
		return rep, err
	}
	robots, err := st.FailingRobots(ctx)
	if err != nil {
		return rep, err
	}
	issues := map[string]*HostIssue{}
	var order []string
	issue := func(host string) *HostIssue {
		if h, ok := issues[host]; ok {
			return h
		}
		h := &HostIssue{Host: host}
		issues[host] = h
		order = append(order, host)
		return h
	}
	for _, h := range hosts {
		hostIssue(issue(h.Host), h, now)
	}
	for _, r := range robots {
		h := issue(r.Host)
		since := r.FetchedAt
		if r.FailingSince != nil {
			since = *r.FailingSince
		}
		if h.RobotsFailingSince == nil || since.Before(*h.RobotsFailingSince) {
			h.RobotsFailingSince, h.RobotsError = &since, r.LastError
		}
	}
	slices.Sort(order)
	for _, host := range order {
		h := issues[host]
		h.Kinds = kindsOf(h)
		if len(h.Kinds) > 0 {
			rep.Hosts = append(rep.Hosts, *h)
		}
	}
	return rep, nil
}

// Verdict is what health says of one enabled target at a moment.
type Verdict struct {
	// Stale: listed by health — quiet past the stale rule, or never
	// collected past its first scheduled time plus NeverCollectedGrace.
	Stale bool
	// NeverCollected: no crawl of it ever finished with anything to show
	// (stale or not yet); DueBy is then when it becomes stale for that.
	NeverCollected bool
	DueBy          *time.Time
	// QuietSince is its newest article's time, or when it was added;
	// Quiet: more than StaleFactor cadences have passed since.
	QuietSince time.Time
	Quiet      bool
}

// Judge applies health's rules to one enabled target, so every page that
// shows a target's health says what health says.
func Judge(t store.HealthTarget, now time.Time) Verdict {
	v := Verdict{QuietSince: t.CreatedAt, NeverCollected: neverCollected(t)}
	if t.LastArticleTime != nil {
		v.QuietSince = *t.LastArticleTime
	}
	if v.NeverCollected {
		d := firstDue(t, scheduleLocation())
		v.DueBy = &d
	}
	v.Quiet = IsStale(v.QuietSince, t.CadenceDays, now)
	v.Stale = v.Quiet || (v.NeverCollected && now.After(*v.DueBy))
	return v
}

// neverCollected: no crawl of the target ever finished with anything to
// show — no article, no recorded crawl, and no run but failed ones.
func neverCollected(t store.HealthTarget) bool {
	return t.LastArticleTime == nil && t.LastCrawledAt == nil &&
		(t.LastRun == nil || t.LastRun.Outcome == store.RunFailed)
}

// firstDue is when a never-collected target is overdue: its first
// scheduled time after it was added, plus NeverCollectedGrace. A target
// without a (readable) schedule is measured from when it was added: it is
// enabled, so someone expects it to be collected.
func firstDue(t store.HealthTarget, loc *time.Location) time.Time {
	expr := strings.TrimSpace(t.ScheduleCron)
	first := t.CreatedAt
	if expr != "" {
		if !strings.HasPrefix(expr, "CRON_TZ=") && !strings.HasPrefix(expr, "TZ=") {
			expr = "CRON_TZ=" + loc.String() + " " + expr
		}
		if sched, err := cron.ParseStandard(expr); err == nil {
			if next := sched.Next(t.CreatedAt); !next.IsZero() {
				first = next
			}
		}
	}
	return first.Add(NeverCollectedGrace)
}

// scheduleLocation is the zone schedule_cron is read in, as the scheduler
// reads it: ZHIZHI_TIMEZONE (Asia/Shanghai when unset).
func scheduleLocation() *time.Location { return zone.Display() }

// hostIssue fills the host_state part of an issue.
func hostIssue(h *HostIssue, s model.HostState, now time.Time) {
	h.ConsecutiveErrors = s.ConsecutiveErrors
	if s.BackoffUntil != nil && s.BackoffUntil.After(now) {
		h.BackoffUntil = s.BackoffUntil
	}
	if s.BreakerUntil != nil && s.BreakerUntil.After(now) {
		h.BreakerUntil = s.BreakerUntil
	}
	for _, t := range s.BreakerTrips {
		if now.Sub(t) <= ReviewWindow {
			h.BreakerTrips7d++
		}
	}
	if s.BlockReason != "" {
		h.Kinds = append(h.Kinds, s.BlockReason)
	}
	if s.NeedsReview {
		h.Kinds = append(h.Kinds, HostReview)
	}
}

// kindsOf lists a host's problems in their fixed order; the block reason
// and review flag were noted from host_state already.
func kindsOf(h *HostIssue) []string {
	kinds := append([]string(nil), h.Kinds...)
	if h.BreakerUntil != nil {
		kinds = append(kinds, HostBreaker)
	}
	if h.RobotsFailingSince != nil {
		kinds = append(kinds, HostRobots)
	}
	if h.BackoffUntil != nil {
		kinds = append(kinds, HostBackoff)
	}
	return kinds
}
