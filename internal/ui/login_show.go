package ui

import (
	"net/http"
	"net/url"
	"strings"
)

type loginData struct {
	Username string
	Next     string
}

// loginShow is the sign-in form; someone already signed in goes on.
func (c *console) loginShow(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if p, err := c.sessions.Authenticate(r); err == nil && p != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", page{Title: "登录", Data: loginData{Next: next}})
}

// safeNext returns next when it is a path inside the console, else the
// overview: a login link must never send someone to another site
// ("//evil.test", "https://evil.test", "/\evil.test" all count as such).
func safeNext(next string) string {
	def := Prefix + "/"
	if next == "" || len(next) > 2000 || !strings.HasPrefix(next, Prefix+"/") {
		return def
	}
	// Browsers read a backslash as a slash and drop tabs and newlines, so
	// "/admin/\t/evil" and friends could still leave; refuse them outright.
	if strings.ContainsAny(next, "\\\t\r\n") {
		return def
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return def
	}
	return next
}
