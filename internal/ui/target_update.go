package ui

import (
	"net/http"
	"net/url"
	"strings"

	"zhizhi/internal/auth"
)

// targetUpdate saves the edit form through the dry-run gate. On a target
// from the site files each changed field becomes an override, kept through
// `config sync` until someone reverts it.
func (c *console) targetUpdate(w http.ResponseWriter, r *http.Request) {
	t, site, ok := c.targetAndSite(w, r)
	if !ok {
		return
	}
	f := formOf(t, site.SiteCode)
	if err := readTargetForm(w, r, f); err != nil {
		c.renderTargetForm(w, r, http.StatusBadRequest, f, "请求无效，请重新填写。")
		return
	}
	patch := f.patch()
	if len(f.Errors) > 0 {
		c.renderTargetForm(w, r, http.StatusBadRequest, f, "有填写不正确的项（见标红处），未保存。")
		return
	}
	p, _ := auth.FromContext(r.Context())
	res, err := c.targets.Update(r.Context(), t.TargetCode, patch, p.Actor())
	if err != nil {
		status, msg, ok := f.takeError(err, res)
		if !ok {
			c.serverError(w, r, err)
			return
		}
		c.renderTargetForm(w, r, status, f, msg)
		return
	}
	dest := targetURL(t.TargetCode) + "?saved=" + url.QueryEscape(strings.Join(res.Changed, ","))
	if len(res.Changed) == 0 {
		dest = targetURL(t.TargetCode) + "?unchanged=1"
	} else if res.DryRun == nil {
		dest += "&nosample=1"
	}
	http.Redirect(w, r, dest, http.StatusSeeOther)
}
