package ui

import (
	"net/http"
	"slices"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/queue"
)

// jobStates are the states the page can filter on, in the order shown.
var jobStates = []rivertype.JobState{rivertype.JobStateRunning, rivertype.JobStateAvailable,
	rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending,
	rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded}

func jobStateLabel(s rivertype.JobState) string {
	switch s {
	case rivertype.JobStateRunning:
		return "运行中"
	case rivertype.JobStateAvailable:
		return "待执行"
	case rivertype.JobStateScheduled:
		return "已排期"
	case rivertype.JobStateRetryable:
		return "待重试"
	case rivertype.JobStatePending:
		return "挂起"
	case rivertype.JobStateCompleted:
		return "已完成"
	case rivertype.JobStateCancelled:
		return "已取消"
	case rivertype.JobStateDiscarded:
		return "已放弃"
	}
	return string(s)
}

func jobStateClass(s rivertype.JobState) string {
	switch s {
	case rivertype.JobStateRunning:
		return "blue"
	case rivertype.JobStateCompleted:
		return "green"
	case rivertype.JobStateRetryable:
		return "yellow"
	case rivertype.JobStateDiscarded:
		return "red"
	}
	return "grey"
}

func jobKindLabel(k string) string {
	switch k {
	case queue.KindCrawl:
		return "抓取"
	case queue.KindRecheck:
		return "复查"
	}
	return k
}

type jobsData struct {
	State  rivertype.JobState // the selected state; empty for the unfinished ones
	States []stateCount
	Jobs   []queue.JobInfo
}

// jobList shows the crawl and re-check jobs of the queue by state.
func (c *console) jobList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	depth, err := c.jobs.Depth(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := jobsData{}
	for _, s := range jobStates {
		d.States = append(d.States, stateCount{State: s, Label: jobStateLabel(s), Count: depth[s]})
	}
	states := unfinishedStates
	if s := rivertype.JobState(r.URL.Query().Get("state")); s != "" {
		if !slices.Contains(jobStates, s) {
			c.render(w, r, http.StatusBadRequest, "jobs", page{Title: "任务队列", Active: "jobs",
				Error: "任务状态无效，请从上方选择。", Data: d})
			return
		}
		d.State, states = s, []rivertype.JobState{s}
	}
	if d.Jobs, err = c.jobs.Jobs(ctx, states...); err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "jobs", page{Title: "任务队列", Active: "jobs", Data: d})
}
