package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"zhizhi/internal/auth"
	"zhizhi/internal/onboard"
	"zhizhi/internal/store"
)

// maxPasteBytes bounds the pasted list: 200 base URLs fit many times over.
const maxPasteBytes = 256 << 10

// onboardCreate starts a run from the pasted base URLs: every line must be
// a base URL, or nothing starts and the page names the lines to fix. The
// work goes on in the background; the person is sent to its page.
func (c *console) onboardCreate(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPasteBytes)
	if err := r.ParseForm(); err != nil {
		c.renderOnboardNew(w, r, http.StatusRequestEntityTooLarge, "", "", nil,
			fmt.Sprintf("粘贴的内容过长，一次最多 %d 个站点，请分批粘贴。", onboard.MaxSites))
		return
	}
	paste, adapterID := r.PostFormValue("urls"), r.PostFormValue("adapter")
	if c.onboard == nil {
		c.renderOnboardNew(w, r, http.StatusServiceUnavailable, adapterID, paste, nil, "")
		return
	}
	lines, bad := onboard.ParseBaseURLs(paste)
	if len(bad) > 0 {
		c.renderOnboardNew(w, r, http.StatusBadRequest, adapterID, paste, bad,
			fmt.Sprintf("有 %d 行不是站点网址，请按下面的提示改正后再开始（其余各行已保留）。", len(bad)))
		return
	}
	if len(lines) == 0 {
		c.renderOnboardNew(w, r, http.StatusBadRequest, adapterID, paste, nil,
			"请粘贴至少一个站点网址，每行一个，例如 http://www.example.gov.cn")
		return
	}
	// The configuration in force must load before a run is started: the
	// job that works it builds its own wizard the same way.
	if _, err := c.onboard(r.Context()); err != nil {
		c.serverError(w, r, fmt.Errorf("onboarding wizard: %w", err))
		return
	}
	p, _ := auth.FromContext(r.Context())
	id, err := newRunID()
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	rawLines, err := json.Marshal(lines)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	// The wizard writes no configuration, but it makes the crawler visit
	// these sites on the person's word: that is recorded, with the run.
	urls := make([]string, len(lines))
	for i, l := range lines {
		urls[i] = l.BaseURL
	}
	after, _ := json.Marshal(map[string]any{"base_urls": urls})
	now := c.now()
	err = c.store.StartOnboardRun(r.Context(), &store.OnboardRun{ID: id, Owner: runOwner(p), Adapter: adapterID,
		Lines: rawLines, LineCount: len(lines), Started: now},
		store.OnboardLimits{MaxRunning: maxRunning, Keep: maxRuns, Expired: now.Add(-runTTL)},
		&store.AuditEntry{Actor: p.Actor(), Action: "onboard.start", ObjectType: "onboard_run", ObjectID: id, After: after,
			Detail: fmt.Sprintf("批量接入向导：识别 %d 个站点（%s）", len(urls), strings.Join(urls[:min(3, len(urls))], "、"))})
	if errors.Is(err, store.ErrOnboardBusy) {
		c.renderOnboardNew(w, r, http.StatusTooManyRequests, adapterID, paste, nil, errTooManyRuns.Error()+"。粘贴的网址已保留。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	// Any serve process works the run; this one may be gone by the time
	// the page asks how it goes.
	if err := c.jobs.StartOnboard(r.Context(), id); err != nil {
		c.log.Error("onboarding wizard: queue the run", "run", id, "err", err)
		if ferr := c.store.FailOnboardRun(context.WithoutCancel(r.Context()), id,
			"向导任务未能加入任务队列（已记录日志），请稍后重新开始。", c.now()); ferr != nil {
			c.log.Error("onboarding wizard: record the failure", "run", id, "err", ferr)
		}
	}
	http.Redirect(w, r, Prefix+"/onboard/"+id, http.StatusSeeOther)
}
