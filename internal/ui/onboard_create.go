package ui

import (
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
	wiz, err := c.onboard(r.Context())
	if err != nil {
		c.serverError(w, r, fmt.Errorf("onboarding wizard: %w", err))
		return
	}
	p, _ := auth.FromContext(r.Context())
	run, ctx, err := c.runs.start(runOwner(p), adapterID, lines, c.now())
	if errors.Is(err, errTooManyRuns) {
		c.renderOnboardNew(w, r, http.StatusTooManyRequests, adapterID, paste, nil, err.Error()+"。粘贴的网址已保留。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	// The wizard writes no configuration, but it makes the crawler visit
	// these sites on the person's word: that is recorded.
	urls := make([]string, len(lines))
	for i, l := range lines {
		urls[i] = l.BaseURL
	}
	after, _ := json.Marshal(map[string]any{"base_urls": urls})
	if err := c.store.RecordAudit(r.Context(), &store.AuditEntry{Actor: p.Actor(), Action: "onboard.start",
		ObjectType: "onboard_run", ObjectID: run.ID, After: after,
		Detail: fmt.Sprintf("批量接入向导：识别 %d 个站点（%s）", len(urls), strings.Join(urls[:min(3, len(urls))], "、"))}); err != nil {
		c.runs.remove(run)
		c.serverError(w, r, err)
		return
	}
	go c.runWizard(ctx, run, wiz)
	http.Redirect(w, r, Prefix+"/onboard/"+run.ID, http.StatusSeeOther)
}
