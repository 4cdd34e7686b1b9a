package ui

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"zhizhi/internal/auth"
)

// loginSubmit checks the credentials and starts a session.
func (c *console) loginSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !c.plainForm(w, r, "next") { // safeNext makes any next safe
		return
	}
	if err := r.ParseForm(); err != nil {
		c.render(w, r, http.StatusBadRequest, "login", page{Title: "登录", Error: "请求无效，请重新填写。",
			Data: loginData{Next: Prefix + "/"}})
		return
	}
	username := strings.TrimSpace(r.PostFormValue("username"))
	password := r.PostFormValue("password")
	next := safeNext(r.PostFormValue("next"))
	data := loginData{Username: username, Next: next}
	if username == "" || password == "" {
		c.render(w, r, http.StatusBadRequest, "login", page{Title: "登录", Error: "请输入用户名和密码。", Data: data})
		return
	}
	p, err := c.sessions.Login(w, r, username, password)
	var limited *auth.RateLimitError
	switch {
	case errors.As(err, &limited):
		minutes := max(1, int(math.Ceil(limited.RetryAfter.Minutes())))
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(limited.RetryAfter.Seconds()))))
		c.render(w, r, http.StatusTooManyRequests, "login", page{Title: "登录",
			Error: fmt.Sprintf("登录尝试过多，请 %d 分钟后再试", minutes), Data: data})
		return
	case errors.Is(err, auth.ErrRateLimited):
		c.render(w, r, http.StatusTooManyRequests, "login", page{Title: "登录",
			Error: "登录尝试过多，请稍后再试", Data: data})
		return
	case errors.Is(err, auth.ErrBadCredentials), errors.Is(err, auth.ErrUnauthenticated):
		c.render(w, r, http.StatusUnauthorized, "login", page{Title: "登录", Error: "用户名或密码错误", Data: data})
		return
	case err != nil:
		c.serverError(w, r, fmt.Errorf("login: %w", err))
		return
	}
	c.log.Info("console login", "user", p.Username, "role", p.Role)
	http.Redirect(w, r, next, http.StatusSeeOther)
}
