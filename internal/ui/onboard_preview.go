package ui

import (
	"net/http"

	"zhizhi/internal/onboard"
)

type previewData struct {
	ID     string
	Drafts []onboard.Draft
}

// onboardPreview shows each draft's YAML, read-only, with the download of
// them all. Nothing has been written: the person takes the files to review.
func (c *console) onboardPreview(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	d := previewData{ID: run.ID, Drafts: run.drafts}
	if len(d.Drafts) == 0 {
		http.Redirect(w, r, Prefix+"/onboard/"+run.ID, http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "onboard_preview", page{Title: "批量接入向导 · 预览草稿", Active: "wizard", Data: d})
}
