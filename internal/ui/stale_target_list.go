package ui

import (
	"cmp"
	"net/http"
	"slices"

	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type staleRow struct {
	health.StaleTarget
	DeptID        *int64
	DeptName      string
	SiteName      string
	LastCrawledAt string
}

// staleTargetList lists every enabled target that has gone quiet for
// longer than three times its expected cadence — the list the overview
// shows the top of — with the department each one belongs to.
func (c *console) staleTargetList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rep, err := health.Check(ctx, c.store, c.now())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	depts, err := c.store.ListDepartments(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	byCode := map[string]model.Target{}
	for _, t := range targets {
		byCode[t.TargetCode] = t
	}
	deptName := deptNames(depts)
	siteName := map[string]string{}
	for _, s := range sites {
		siteName[s.SiteCode] = s.SiteName
	}
	rows := make([]staleRow, 0, len(rep.Stale))
	for _, s := range rep.Stale {
		t := byCode[s.TargetCode]
		row := staleRow{StaleTarget: s, DeptID: t.DeptID, SiteName: siteName[s.SiteCode], LastCrawledAt: "—"}
		if t.DeptID != nil {
			row.DeptName = deptName[*t.DeptID]
		}
		if t.LastCrawledAt != nil {
			row.LastCrawledAt = c.fmtTime(*t.LastCrawledAt)
		}
		rows = append(rows, row)
	}
	// The quietest first, as on the overview: they have waited longest.
	slices.SortStableFunc(rows, func(a, b staleRow) int {
		return cmp.Compare(b.QuietDays/float64(b.LimitDays), a.QuietDays/float64(a.LimitDays))
	})
	p := page{Title: "停更目标", Active: "stale", Data: rows}
	q := r.URL.Query()
	for _, s := range rows {
		crawlNotice(&p, q, s.TargetCode, s.TargetName, "立即采集")
	}
	c.render(w, r, http.StatusOK, "stale_targets", p)
}
