package ui

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type targetListFilter struct {
	Site, Dept, Enabled, Stale string
}

// targetListRow is a target as the list and detail pages show it: its
// site and department by name, its health and its newest run.
type targetListRow struct {
	targetRow
	SiteCode, SiteName string
	DeptName           string
	LastRun            *store.TargetRun
}

type targetListData struct {
	Filter targetListFilter
	Sites  []model.Site
	Depts  []model.Department
	Rows   []targetListRow
	Total  int // before filtering
}

// targetList is every target with the filters a person narrows them by —
// site, department, enabled, stale — and each one's last crawl, last
// article and health, stale in red.
func (c *console) targetList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f := targetListFilter{Site: strings.TrimSpace(q.Get("site")), Dept: strings.TrimSpace(q.Get("dept")),
		Enabled: q.Get("enabled"), Stale: q.Get("stale")}
	d := targetListData{Filter: f}
	var err error
	if d.Sites, err = c.store.ListSites(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	if d.Depts, err = c.store.ListDepartments(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	refuse := func(msg string) {
		c.render(w, r, http.StatusBadRequest, "targets", page{Title: "采集目标", Active: "targets", Error: msg, Data: d})
	}
	if f.Site != "" && !slices.ContainsFunc(d.Sites, func(s model.Site) bool { return s.SiteCode == f.Site }) {
		refuse("没有站点「" + f.Site + "」，请从列表中选择。")
		return
	}
	var deptID int64
	if f.Dept != "" {
		deptID, err = strconv.ParseInt(f.Dept, 10, 64)
		if err != nil || !slices.ContainsFunc(d.Depts, func(x model.Department) bool { return x.DeptID == deptID }) {
			refuse("没有这个部门，请从列表中选择。")
			return
		}
	}
	if !slices.Contains([]string{"", "yes", "no"}, f.Enabled) || !slices.Contains([]string{"", "yes", "no"}, f.Stale) {
		refuse("筛选条件无效，请从列表中选择。")
		return
	}
	rows, err := c.targetRows(ctx, store.TargetFilter{SiteCode: f.Site}, d.Sites, d.Depts)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Total = len(rows)
	for _, row := range rows {
		if (f.Dept != "" && (row.DeptID == nil || *row.DeptID != deptID)) ||
			(f.Enabled != "" && row.Enabled != (f.Enabled == "yes")) ||
			(f.Stale != "" && row.Stale != (f.Stale == "yes")) {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	p := page{Title: "采集目标", Active: "targets", Data: d}
	// A confirmation names only a target that exists, so a crafted link
	// cannot make the page claim a crawl that was never queued.
	for _, row := range rows {
		switch row.TargetCode {
		case q.Get("crawl"):
			p.Flash = "已将「" + row.TargetName + "」加入抓取队列，排在定时任务之前。"
			if q.Get("state") == "running" {
				p.Flash = "「" + row.TargetName + "」正在抓取中，未重复加入队列。"
			}
		case q.Get("refused"):
			p.Error = "「" + row.TargetName + "」已停用（或其站点、部门已停用），不能立即采集。"
		}
	}
	c.render(w, r, http.StatusOK, "targets", p)
}

// targetRows reads the targets of f with what the pages show beside each.
func (c *console) targetRows(ctx context.Context, f store.TargetFilter, sites []model.Site, depts []model.Department) ([]targetListRow, error) {
	targets, err := c.store.ListTargets(ctx, f)
	if err != nil {
		return nil, err
	}
	runs, err := c.store.LastTargetRuns(ctx)
	if err != nil {
		return nil, err
	}
	siteByID := map[int64]model.Site{}
	for _, s := range sites {
		siteByID[s.ID] = s
	}
	deptName := map[int64]string{}
	for _, d := range depts {
		deptName[d.DeptID] = d.DeptName
	}
	now := c.now()
	out := make([]targetListRow, 0, len(targets))
	for _, t := range targets {
		row := targetListRow{targetRow: newTargetRow(t, runs, now)}
		s := siteByID[t.SiteID]
		row.SiteCode, row.SiteName = s.SiteCode, s.SiteName
		if t.DeptID != nil {
			row.DeptName = deptName[*t.DeptID]
		}
		if run, ok := runs[t.ID]; ok {
			row.LastRun = &run
		}
		out = append(out, row)
	}
	return out, nil
}
