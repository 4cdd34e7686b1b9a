package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/auth"
	"zhizhi/internal/target"
)

// targetSetEnabled switches a target on or off with the reason the person
// gives; on a target from the site files the state is kept through
// `config sync` until someone reverts it.
func (c *console) targetSetEnabled(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.targetShowRefused(w, r, "", "请求无效，请重新填写。")
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	var on bool
	switch r.PostFormValue("enabled") {
	case "1":
		on = true
	case "0":
	default:
		c.targetShowRefused(w, r, reason, "请求无效：请使用页面上的启用或停用按钮。")
		return
	}
	switch {
	case reason == "":
		c.targetShowRefused(w, r, reason, "请填写原因：说明为什么启用或停用，将记入审计日志。")
		return
	case utf8.RuneCountInString(reason) > maxReasonRunes:
		c.targetShowRefused(w, r, reason, fmt.Sprintf("原因过长，请控制在 %d 字以内。", maxReasonRunes))
		return
	}
	p, _ := auth.FromContext(r.Context())
	_, err := c.targets.SetEnabled(r.Context(), code, on, reason, p.Actor())
	if errors.Is(err, target.ErrNotFound) {
		c.notFound(w, r, "没有这个采集目标。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	state := "0"
	if on {
		state = "1"
	}
	http.Redirect(w, r, targetURL(code)+"?enabled="+state, http.StatusSeeOther)
}

// targetShowRefused shows the target again with why a change was refused.
func (c *console) targetShowRefused(w http.ResponseWriter, r *http.Request, reason, msg string) {
	d, ok := c.targetShowData(w, r)
	if !ok {
		return
	}
	d.Reason = reason
	c.render(w, r, http.StatusBadRequest, "target", page{Title: "采集目标 · " + d.Row.TargetName, Active: "targets",
		Error: msg, Data: d})
}
