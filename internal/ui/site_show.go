package ui

import (
	"errors"
	"net/http"
	"path/filepath"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type targetRow struct {
	model.Target
	Stale     bool
	QuietDays int
	// NeverCollected: enabled and never collected (stale too once its
	// first scheduled time plus health's grace has passed); Quiet: past
	// the stale rule's cadences without a new article.
	NeverCollected, Quiet bool
}

type siteData struct {
	Site    *model.Site
	YAML    *yamlFile
	Depts   []model.SiteDepartment
	Targets []targetRow
}

// siteShow is one site: its settings, its YAML template (read-only), its
// departments and its targets with their health.
func (c *console) siteShow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	site, err := c.store.SiteByCode(ctx, r.PathValue("code"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个站点。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := siteData{Site: site}
	if sf := siteFile(c.bundle(), site.SiteCode); sf != nil {
		y := readYAML(sf.Path)
		y.Path = filepath.ToSlash(sf.RelPath)
		d.YAML = &y
	}
	if d.Depts, err = c.store.ListSiteDepartments(ctx, site.ID); err != nil {
		c.serverError(w, r, err)
		return
	}
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{SiteCode: site.SiteCode})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	runs, err := c.store.LastTargetRuns(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	now := c.now()
	for _, t := range targets {
		d.Targets = append(d.Targets, newTargetRow(t, runs, now))
	}
	p := page{Title: "站点 · " + site.SiteName, Active: "sites", Data: d}
	q := r.URL.Query()
	for _, t := range targets {
		crawlNotice(&p, q, t.TargetCode, t.TargetName, "立即采集")
	}
	c.render(w, r, http.StatusOK, "site", p)
}

// newTargetRow is t's row with its health as health judges it.
func newTargetRow(t model.Target, runs map[int64]store.TargetRun, now time.Time) targetRow {
	var run *store.TargetRun
	if r, ok := runs[t.ID]; ok {
		run = &r
	}
	v := targetHealth(t, run, now)
	return targetRow{Target: t, QuietDays: int(now.Sub(v.QuietSince).Hours() / 24),
		Stale: t.Enabled && v.Stale, NeverCollected: t.Enabled && v.NeverCollected, Quiet: t.Enabled && v.Quiet}
}

func bindingLabel(b string) string {
	switch b {
	case model.BindingPending:
		return "待绑定"
	case model.BindingMapped:
		return "已映射"
	case model.BindingCityLevel:
		return "市级"
	case model.BindingCrossDept:
		return "跨部门"
	case model.BindingExternalRef:
		return "外部参考"
	}
	return b
}
