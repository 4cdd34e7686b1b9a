package ui

import (
	"errors"
	"net/http"
	"net/url"

	"zhizhi/internal/auth"
	"zhizhi/internal/target"
)

// targetRevert gives one field of a target from the site files back to
// what the files say, forgetting the person's change.
func (c *console) targetRevert(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.targetShowRefused(w, r, "", "请求无效，请重新提交。")
		return
	}
	field := r.PostFormValue("field")
	p, _ := auth.FromContext(r.Context())
	_, err := c.targets.Revert(r.Context(), code, field, p.Actor())
	var in *target.InputError
	switch {
	case errors.Is(err, target.ErrNotFound):
		c.notFound(w, r, "没有这个采集目标。")
		return
	case errors.As(err, &in):
		msg := "无法恢复："
		for _, pr := range in.Problems {
			msg += pr.Message
		}
		c.targetShowRefused(w, r, "", msg)
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, targetURL(code)+"?reverted="+url.QueryEscape(field), http.StatusSeeOther)
}
