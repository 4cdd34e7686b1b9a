package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// crawlBackPage matches the other pages with a 立即采集 button, which the
// person returns to; anything else goes back to the target's site.
var crawlBackPage = regexp.MustCompile(`^/admin/(departments/[1-9][0-9]{0,18}|stale-targets)$`)

// targetCrawl queues a crawl of one target ahead of the scheduled ones,
// as `zhizhi crawl --enqueue --target` does, and records who asked.
func (c *console) targetCrawl(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	code := r.PathValue("code")
	t, err := c.store.TargetByCode(ctx, code)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个采集目标。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	site, err := c.store.SiteByID(ctx, t.SiteID)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	back := Prefix + "/sites/" + url.PathEscape(site.SiteCode)
	// The page the button was on: a department or the stale list (checked
	// by pattern), or a target page from a fixed list — never a free
	// address.
	switch b := r.PostFormValue("back"); {
	case crawlBackPage.MatchString(b):
		back = b
	case b == "targets":
		back = Prefix + "/targets"
	case b == "target":
		back = targetURL(code)
	}
	// A disabled target (or one of a disabled site or department) is not
	// crawled by the workers either; queueing it would only look like work.
	enabled, err := c.store.ListTargets(ctx, store.TargetFilter{TargetCode: code, EnabledOnly: true})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if len(enabled) == 0 {
		http.Redirect(w, r, back+"?refused="+url.QueryEscape(code), http.StatusSeeOther)
		return
	}
	e, err := c.jobs.CrawlNow(ctx, *t)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p, _ := auth.FromContext(ctx)
	after, _ := json.Marshal(map[string]any{"job_id": e.JobID, "running": e.Running, "moved": e.Moved})
	if err := c.store.RecordAudit(ctx, &store.AuditEntry{Actor: p.Actor(), Action: "target.crawl_now",
		ObjectType: "target", ObjectID: code, After: after, Detail: "立即采集"}); err != nil {
		c.serverError(w, r, err)
		return
	}
	state := "queued"
	if e.Running {
		state = "running"
	}
	http.Redirect(w, r, back+"?crawl="+url.QueryEscape(code)+"&state="+state, http.StatusSeeOther)
}
