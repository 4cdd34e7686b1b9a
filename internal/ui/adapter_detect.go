package ui

import (
	"net/http"
	"net/url"

	"zhizhi/internal/auth"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/store"
)

// adapterDetect runs the adapter's detection against every site configured
// with it — each site's home page, read politely, checked against every
// adapter's signatures, as the onboarding wizard does — and keeps the
// results, which the adapter page and the adapter list show: a site whose
// CMS changed is found before its crawls fail.
func (c *console) adapterDetect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	b := c.bundle()
	id := r.PathValue("id")
	if b == nil || b.CMS[id] == nil {
		c.notFound(w, r, "配置目录中没有这个适配器（或其文件有误，请运行 zhizhi config lint）。")
		return
	}
	back := Prefix + "/adapters/" + url.PathEscape(id)
	if c.onboard == nil {
		c.adapterShowWith(w, r, http.StatusServiceUnavailable, id, "", "本控制台未接入采集器，无法探测。请在 zhizhi serve 中打开控制台。")
		return
	}
	all, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	var sites []model.Site
	var lines []onboard.Line
	for _, s := range all {
		if s.CMSAdapter == id {
			sites = append(sites, s)
			lines = append(lines, onboard.Line{Line: len(lines) + 1, BaseURL: s.BaseURL})
		}
	}
	if len(sites) == 0 {
		c.adapterShowWith(w, r, http.StatusOK, id, "", "还没有站点使用这个适配器，无需探测。")
		return
	}
	wiz, err := c.onboard(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	checks := make([]store.AdapterCheck, len(sites))
	for i, d := range wiz.Detect(ctx, lines) {
		ch := store.AdapterCheck{SiteID: sites[i].ID, DetectedAs: d.AdapterID, Evidence: d.Evidence, Problem: d.Problem}
		switch {
		case d.Problem != "":
			ch.Outcome, ch.DetectedAs, ch.Evidence = store.CheckError, "", ""
		case d.AdapterID == id:
			ch.Outcome = store.CheckMatched
		case d.AdapterID != "":
			ch.Outcome = store.CheckOther
		default:
			ch.Outcome = store.CheckUnmatched
		}
		checks[i] = ch
	}
	if err := ctx.Err(); err != nil {
		return // the person left; a half-done run is not kept
	}
	p, _ := auth.FromContext(ctx)
	if err := c.store.RecordAdapterChecks(ctx, id, p.Actor(), checks); err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("adapter detection run from the console", "adapter", id, "sites", len(sites), "actor", p.Actor())
	http.Redirect(w, r, back+"?checked=1#checks", http.StatusSeeOther)
}
