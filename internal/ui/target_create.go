package ui

import (
	"net/http"

	"zhizhi/internal/auth"
)

// targetCreate saves a new target through the dry-run gate: a target with
// a sample article is saved only when the dry-run is green; a red one, or a
// refused field, gives the form back as the person filled it, with why.
func (c *console) targetCreate(w http.ResponseWriter, r *http.Request) {
	f := &targetForm{}
	if err := readTargetForm(w, r, f); err != nil {
		c.renderTargetForm(w, r, http.StatusBadRequest, f, "请求无效，请重新填写。")
		return
	}
	in := f.input()
	if len(f.Errors) > 0 {
		c.renderTargetForm(w, r, http.StatusBadRequest, f, "有填写不正确的项（见标红处），未保存。")
		return
	}
	p, _ := auth.FromContext(r.Context())
	res, err := c.targets.Create(r.Context(), in, p.Actor())
	if err != nil {
		status, msg, ok := f.takeError(err, res)
		if !ok {
			c.serverError(w, r, err)
			return
		}
		c.renderTargetForm(w, r, status, f, msg)
		return
	}
	dest := targetURL(res.Target.TargetCode) + "?saved=1"
	if len(res.Warnings) > 0 {
		dest += "&nosample=1"
	}
	http.Redirect(w, r, dest, http.StatusSeeOther)
}
