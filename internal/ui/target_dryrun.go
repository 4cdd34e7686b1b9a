package ui

import (
	"net/http"

	"zhizhi/internal/target"
)

// targetDryRun runs the checks and the dry-run on the form as filled in and
// shows the result, saving nothing, so the person sees before saving
// whether the list and the sample article are read. It answers 200 even
// when the dry-run is red: the preview itself worked, and htmx swaps the
// form in only on success.
func (c *console) targetDryRun(w http.ResponseWriter, r *http.Request) {
	f := &targetForm{}
	code := r.PathValue("code")
	if code != "" {
		t, site, ok := c.targetAndSite(w, r)
		if !ok {
			return
		}
		f = formOf(t, site.SiteCode)
	}
	if err := readTargetForm(w, r, f); err != nil {
		c.renderTargetForm(w, r, http.StatusBadRequest, f, "请求无效，请重新填写。")
		return
	}
	var (
		res *target.Result
		err error
	)
	if f.Edit {
		patch := f.patch()
		if len(f.Errors) == 0 {
			res, err = c.targets.PreviewUpdate(r.Context(), code, patch)
		}
	} else {
		in := f.input()
		if len(f.Errors) == 0 {
			res, err = c.targets.PreviewCreate(r.Context(), in)
		}
	}
	msg := ""
	switch {
	case len(f.Errors) > 0:
		msg = "有填写不正确的项（见标红处），未试运行。"
	case err != nil:
		_, m, ok := f.takeError(err, res)
		if !ok {
			c.serverError(w, r, err)
			return
		}
		if !f.Ran {
			msg = m
		}
	case f.Edit && len(res.Changed) == 0 && f.SampleArticleURL != "":
		// Nothing changed: the person is re-checking the saved target.
		d, err := c.targets.DryRunTarget(r.Context(), code)
		if err != nil {
			if _, m, ok := f.takeError(err, nil); ok {
				msg = m
				break
			}
			c.serverError(w, r, err)
			return
		}
		f.Ran, f.DryRun = true, d
	default:
		f.Ran, f.DryRun, f.Warnings = true, res.DryRun, res.Warnings
	}
	c.renderTargetForm(w, r, http.StatusOK, f, msg)
}
