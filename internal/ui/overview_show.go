package ui

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/health"
	"zhizhi/internal/store"
)

type overviewData struct {
	Sites          int
	TargetsEnabled int
	Articles       int
	ArticlesReady  int
	Stale          []health.StaleTarget // the first overviewStaleRows
	StaleCount     int
	Failing        []health.FailingTarget
	Hosts          []hostIssueView
	QueueDepth     int // jobs waiting or running
	QueueStates    []stateCount
	SiteNames      map[string]string // by site code
}

type stateCount struct {
	State rivertype.JobState
	Label string
	Count int
}

// overviewStaleRows is how many stale targets the overview lists; the
// count says how many more there are.
const overviewStaleRows = 20

// unfinishedStates are the job states that make up the queue's depth.
var unfinishedStates = []rivertype.JobState{rivertype.JobStateRunning, rivertype.JobStateAvailable,
	rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending}

// overviewShow is the landing page: what is collected and what needs a person.
func (c *console) overviewShow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var d overviewData
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Sites = len(sites)
	d.SiteNames = map[string]string{}
	for _, s := range sites {
		d.SiteNames[s.SiteCode] = s.SiteName
	}
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.TargetsEnabled = len(targets)
	counts, err := c.store.ArticleCounts(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	for _, n := range counts {
		d.Articles += n.Ready + n.Failed + n.Raw
		d.ArticlesReady += n.Ready
	}
	rep, err := health.Check(ctx, c.store, c.now())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Stale, d.StaleCount, d.Failing = rep.Stale, len(rep.Stale), rep.Failing
	// The quietest first: they have waited longest for a person.
	slices.SortStableFunc(d.Stale, func(a, b health.StaleTarget) int {
		return cmp.Compare(b.QuietDays/float64(b.LimitDays), a.QuietDays/float64(a.LimitDays))
	})
	if len(d.Stale) > overviewStaleRows {
		d.Stale = d.Stale[:overviewStaleRows]
	}
	for _, h := range rep.Hosts {
		d.Hosts = append(d.Hosts, hostIssueView{Host: h.Host, Badges: issueBadges(h)})
	}
	depth, err := c.jobs.Depth(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	for _, s := range unfinishedStates {
		d.QueueDepth += depth[s]
		d.QueueStates = append(d.QueueStates, stateCount{State: s, Label: jobStateLabel(s), Count: depth[s]})
	}
	c.render(w, r, http.StatusOK, "overview", page{Title: "概览", Active: "overview", Data: d})
}
