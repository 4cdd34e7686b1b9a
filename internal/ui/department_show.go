package ui

import (
	"errors"
	"net/http"
	"strconv"

	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// deptTarget is a target of the department with what tells a person
// whether its column is alive.
type deptTarget struct {
	model.Target
	SiteCode, SiteName string
	Active             bool                // it, its site and its site department are enabled
	Stale              *health.StaleTarget // non-nil: quiet past the stale rule
	Failing            bool                // its last finished run failed
	LastRun            *store.TargetRun    // the newest run, finished or not
	LastArticle        *model.Article      // the newest stored article
	Health             string              // ok | stale | failing | off
}

type deptData struct {
	Dept     *model.Department
	Parent   *model.Department
	Children []model.Department
	Targets  []deptTarget
	Stale    int
	Failing  int
}

// departmentShow is one local department with each of its targets: last
// crawl, last article, last run and health, stale ones in red. This is
// where operations notice that one of a department's columns has died.
func (c *console) departmentShow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这个本地部门。")
		return
	}
	dept, err := c.store.DepartmentByID(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			c.notFound(w, r, "没有这个本地部门。")
			return
		}
		c.serverError(w, r, err)
		return
	}
	d := deptData{Dept: dept}
	all, err := c.store.ListDepartments(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	for i := range all {
		o := all[i]
		if dept.ParentDeptID != nil && o.DeptID == *dept.ParentDeptID && o.DeptID != dept.DeptID {
			d.Parent = &o
		}
		if o.ParentDeptID != nil && *o.ParentDeptID == dept.DeptID && o.DeptID != dept.DeptID {
			d.Children = append(d.Children, o)
		}
	}
	targets, err := c.store.DepartmentTargets(ctx, id)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	active, err := c.store.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	isActive := map[int64]bool{}
	for _, t := range active {
		isActive[t.ID] = true
	}
	// The health report decides stale and failing, so this page, the
	// overview, `zhizhi health` and the alerts never disagree.
	rep, err := health.Check(ctx, c.store, c.now())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	stale := map[string]*health.StaleTarget{}
	for i := range rep.Stale {
		stale[rep.Stale[i].TargetCode] = &rep.Stale[i]
	}
	failing := map[string]bool{}
	for _, f := range rep.Failing {
		failing[f.TargetCode] = true
	}
	runs, err := c.store.LastTargetRuns(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	siteByID := sitesByID(sites)
	for _, t := range targets {
		dt := deptTarget{Target: t, SiteCode: siteByID[t.SiteID].SiteCode, SiteName: siteByID[t.SiteID].SiteName,
			Active: isActive[t.ID], Stale: stale[t.TargetCode], Failing: failing[t.TargetCode]}
		if run, ok := runs[t.ID]; ok {
			dt.LastRun = &run
		}
		tid := t.ID
		last, err := c.store.QueryArticles(ctx, store.ArticleQuery{TargetID: &tid, Limit: 1})
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		if len(last) > 0 {
			dt.LastArticle = &last[0]
		}
		switch {
		case !dt.Active:
			dt.Health = "off"
		case dt.Stale != nil:
			dt.Health = "stale"
			d.Stale++
		case dt.Failing:
			dt.Health = "failing"
		default:
			dt.Health = "ok"
		}
		if dt.Active && dt.Failing {
			d.Failing++
		}
		d.Targets = append(d.Targets, dt)
	}
	p := page{Title: "本地部门 · " + dept.DeptName, Active: "departments", Data: d}
	q := r.URL.Query()
	for _, t := range targets {
		crawlNotice(&p, q, t.TargetCode, t.TargetName, "立即采集")
	}
	c.render(w, r, http.StatusOK, "department", p)
}

// runOutcomeLabel says how a run ended, in the staff's words, and the
// badge colour it gets.
func runOutcomeLabel(o string) (label, class string) {
	switch o {
	case store.RunOK:
		return "成功", "green"
	case store.RunFailed:
		return "失败", "red"
	case store.RunInterrupted:
		return "中断", "orange"
	case store.RunBlocked:
		return "robots.txt 禁止", "grey"
	}
	return o, "grey"
}

// RunLabel and RunClass describe the last run for the page.
func (t deptTarget) RunLabel() string { l, _ := runOutcomeLabel(t.LastRun.Outcome); return l }
func (t deptTarget) RunClass() string { _, c := runOutcomeLabel(t.LastRun.Outcome); return c }
