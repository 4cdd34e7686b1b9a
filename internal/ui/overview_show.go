package ui

import (
	"net/http"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/health"
	"zhizhi/internal/store"
)

type overviewData struct {
	Sites          int
	TargetsEnabled int
	Articles       int
	ArticlesReady  int
	Stale          []health.StaleTarget
	Failing        []health.FailingTarget
	Hosts          []hostIssueView
	QueueDepth     int // jobs waiting or running
	QueueStates    []stateCount
}

type stateCount struct {
	State rivertype.JobState
	Label string
	Count int
}

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
	d.Stale, d.Failing = rep.Stale, rep.Failing
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
