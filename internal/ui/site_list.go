package ui

import (
	"net/http"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type siteRow struct {
	model.Site
	Targets        int
	TargetsEnabled int
	Articles       int
}

// siteList shows every site with its targets and articles.
func (c *console) siteList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	counts, err := c.store.ArticleCounts(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	rows := make([]siteRow, 0, len(sites))
	for _, s := range sites {
		row := siteRow{Site: s}
		for _, t := range targets {
			if t.SiteID == s.ID {
				row.Targets++
				if t.Enabled {
					row.TargetsEnabled++
				}
			}
		}
		n := counts[s.SiteCode]
		row.Articles = n.Ready + n.Failed + n.Raw
		rows = append(rows, row)
	}
	c.render(w, r, http.StatusOK, "sites", page{Title: "站点", Active: "sites", Data: rows})
}

func siteRoleLabel(role string) string {
	switch role {
	case model.RoleQingyuanLocal:
		return "清远本地"
	case model.RoleCountyLocal:
		return "县区本地"
	case model.RoleProvinceRef:
		return "省级参考"
	case model.RoleNationRef:
		return "国家级参考"
	}
	return role
}

func accessLabel(a string) string {
	switch a {
	case model.AccessFull:
		return "全文"
	case model.AccessSummary:
		return "仅摘要"
	}
	return a
}
