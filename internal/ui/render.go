package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"zhizhi/internal/config/zone"

	"zhizhi/internal/auth"
)

//go:embed templates static
var embedded embed.FS

// navItem is one entry of the left menu. Soon marks a page not built yet:
// shown, greyed, not a link, so staff see where it will be.
type navItem struct {
	Key, Label, Href string
	Soon             bool
}

type navGroup struct {
	Label string
	Items []navItem
}

var nav = []navGroup{
	{"", []navItem{{Key: "overview", Label: "概览", Href: Prefix + "/"}}},
	{"采集配置", []navItem{
		{Key: "sites", Label: "站点", Href: Prefix + "/sites"},
		{Key: "targets", Label: "采集目标", Href: Prefix + "/targets"},
		{Key: "departments", Label: "部门", Href: Prefix + "/departments"},
		{Key: "catalog", Label: "栏目目录", Href: Prefix + "/catalog"},
		{Key: "wizard", Label: "批量接入向导", Href: Prefix + "/onboard"},
		{Key: "studio", Label: "工作台", Href: Prefix + "/studio"},
		{Key: "adapters", Label: "CMS 适配器", Href: Prefix + "/adapters"},
	}},
	{"数据", []navItem{
		{Key: "articles", Label: "文章", Href: Prefix + "/articles"},
		{Key: "crawl-logs", Label: "抓取日志", Href: Prefix + "/crawl-logs"},
	}},
	{"公开门户", []navItem{
		{Key: "cards", Label: "摘要审核", Href: Prefix + "/cards"},
		{Key: "takedowns", Label: "下架请求", Href: Prefix + "/takedowns"},
		{Key: "portal", Label: "门户首页 ↗", Href: "/"},
		{Key: "ledger", Label: "透明账本 ↗", Href: "/ledger"},
	}},
	{"语料库", []navItem{
		{Key: "corpus", Label: "摄取与概况", Href: Prefix + "/corpus"},
		{Key: "corpus-works", Label: "作品", Href: Prefix + "/corpus/works"},
		{Key: "corpus-candidates", Label: "重复候选", Href: Prefix + "/corpus/candidates"},
		{Key: "corpus-releases", Label: "发布", Href: Prefix + "/corpus/releases"},
		{Key: "corpus-search", Label: "检索", Href: Prefix + "/corpus/search"},
	}},
	{"运行", []navItem{
		{Key: "stale", Label: "停更目标", Href: Prefix + "/stale-targets"},
		{Key: "hosts", Label: "主机状态", Href: Prefix + "/hosts"},
		{Key: "jobs", Label: "任务队列", Href: Prefix + "/jobs"},
		{Key: "audit", Label: "审计日志", Href: Prefix + "/audit"},
	}},
}

// page is what the layout renders around a page's own data.
type page struct {
	Title     string
	Active    string // the nav key of the page
	Principal *auth.Principal
	Nav       []navGroup
	Flash     string // a success message after a change
	Error     string // what went wrong with the person's input
	Data      any
}

// render writes the page named name with status. The page is executed into
// a buffer first, so a failing template gives a clean 500, not half a page.
func (c *console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := c.pages[name]
	if !ok {
		c.serverError(w, r, fmt.Errorf("no template %q", name))
		return
	}
	if p.Principal == nil {
		p.Principal, _ = auth.FromContext(r.Context())
	}
	p.Nav = nav
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		c.serverError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// serverError logs err and shows a page that does not repeat it: an
// error's text may hold SQL or paths a viewer has no need to see.
func (c *console) serverError(w http.ResponseWriter, r *http.Request, err error) {
	c.log.Error("admin console", "path", r.URL.Path, "err", err)
	if t, ok := c.pages["error"]; ok {
		var buf bytes.Buffer
		p := page{Title: "服务器内部错误", Nav: nav, Data: errorData{Code: 500, Heading: "服务器内部错误",
			Message: "处理请求时出错，已记录日志。请稍后重试，或联系系统管理员。"}}
		p.Principal, _ = auth.FromContext(r.Context())
		if t.ExecuteTemplate(&buf, "layout.html", p) == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(buf.Bytes())
			return
		}
	}
	http.Error(w, "服务器内部错误", http.StatusInternalServerError)
}

type errorData struct {
	Code    int
	Heading string
	Message string
}

func (c *console) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	c.render(w, r, http.StatusNotFound, "error", page{Title: "未找到",
		Data: errorData{Code: 404, Heading: "未找到", Message: msg}})
}

func (c *console) forbidden(w http.ResponseWriter, r *http.Request, need auth.Role) {
	c.render(w, r, http.StatusForbidden, "error", page{Title: "权限不足",
		Data: errorData{Code: 403, Heading: "权限不足",
			Message: "此操作需要「" + roleName(need) + "」或更高权限。如需办理，请联系系统管理员。"}})
}

// require lets a request through only with a signed-in principal of at
// least role min; others are sent to the login page (keeping where they
// were going) or shown a refusal.
func (c *console) require(min auth.Role, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := c.sessions.Authenticate(r)
		if err == nil && p != nil && p.APIKeyID != 0 {
			// The console is for people signed in: an API key, whatever
			// its scopes, acts only through /api/v1, where they are
			// checked. A program is told so, not sent to a login form.
			c.render(w, r, http.StatusUnauthorized, "error", page{Title: "请登录",
				Data: errorData{Code: 401, Heading: "控制台不接受 API 密钥",
					Message: "控制台只接受登录后的会话。程序请使用 /api/v1/ 接口，密钥在那里按其权限范围生效。"}})
			return
		}
		if err != nil || p == nil {
			target := Prefix + "/login"
			if r.Header.Get("HX-Request") == "true" {
				// A part of a page (a filtered table, a progress card):
				// the whole page goes to the login, which leads back to
				// the page the person was on, not to the part. A
				// redirect would be followed by the browser's request
				// itself and the login form swapped into the part.
				if u, err := url.Parse(r.Header.Get("HX-Current-URL")); err == nil && safeNext(u.RequestURI()) == u.RequestURI() {
					target += "?next=" + url.QueryEscape(u.RequestURI())
				}
				w.Header().Set("HX-Redirect", target)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			// A form posted after the session ended cannot be replayed
			// from a link; its page is where the person goes back to.
			if r.Method == http.MethodGet {
				target += "?next=" + url.QueryEscape(r.URL.RequestURI())
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
		r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		if !p.Role.AtLeast(min) {
			c.forbidden(w, r, min)
			return
		}
		if !c.plainForm(w, r) {
			return
		}
		next(w, r)
	})
}

func roleName(r auth.Role) string {
	switch r {
	case auth.RoleAdmin:
		return "管理员"
	case auth.RoleOperator:
		return "操作员"
	case auth.RoleViewer:
		return "只读用户"
	}
	return string(r)
}

func (c *console) funcs() template.FuncMap {
	return template.FuncMap{
		"roleName":   func(r auth.Role) string { return roleName(r) },
		"isAdmin":    func(p *auth.Principal) bool { return p != nil && p.Role.AtLeast(auth.RoleAdmin) },
		"isOperator": func(p *auth.Principal) bool { return p != nil && p.Role.AtLeast(auth.RoleOperator) },
		"time":       c.fmtTime,
		"timePtr": func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return c.fmtTime(*t)
		},
		// timeText shows a machine time (RFC 3339, as the acquisition
		// API answers) on the console's clock face.
		"timeText": func(s string) string {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return s
			}
			return c.fmtTime(t)
		},
		"robotsWord": robotsWord,
		"ago":        c.ago,
		"yesNo":      func(b bool) string { return map[bool]string{true: "是", false: "否"}[b] },
		"prettyJS":   prettyJSON,
		"join":       strings.Join,
		"deref": func(p *int64) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprint(*p)
		},
		"derefInt": func(p *int) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprint(*p)
		},
		"add":         func(a, b int) int { return a + b },
		"sub":         func(a, b int) int { return a - b },
		"siteRole":    siteRoleLabel,
		"access":      accessLabel,
		"binding":     bindingLabel,
		"purpose":     purposeLabel,
		"jobState":    jobStateLabel,
		"jobStateCls": jobStateClass,
		"jobKind":     jobKindLabel,
		"detect":      detectLabel,
		"runner":      runnerLabel,
		"errorClass":  errorClassLabel,
		"strategy":    strategyLabel,
		"workStatus":  workStatusLabel,
		"review":      reviewLabel,
		"relState":    releaseStateLabel,
		"candKind":    candidateKindLabel,
		"candStatus":  candidateStatusLabel,
		"eventKind":   eventKindLabel,
		"eventDetail": eventDetail,
		"evidence":    eventEvidence,
		"stepState":   stepStateLabel,
		"stepEvid":    traceEvidence,
		"corpusActor": corpusActor,
		"ids":         idSegments,
	}
}

func (c *console) fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	// Staff read Beijing time unannounced; any other zone is named, so a
	// console set to UTC is not read as Beijing time.
	if c.loc.String() != zone.Default {
		return t.In(c.loc).Format("2006-01-02 15:04 MST")
	}
	return t.In(c.loc).Format("2006-01-02 15:04")
}

// ago says how long ago t was in whole units a person reads at a glance.
func (c *console) ago(t time.Time) string {
	d := c.now().Sub(t)
	switch {
	case d < time.Minute:
		return "刚刚"
	case d < time.Hour:
		return fmt.Sprintf("%d 分钟前", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d 小时前", int(d.Hours()))
	}
	return fmt.Sprintf("%d 天前", int(math.Floor(d.Hours()/24)))
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return plainJSON(string(raw))
	}
	return plainJSON(out.String())
}

func strategyLabel(s string) string {
	switch s {
	case "httpx", "direct":
		return "直接请求"
	case "playwright", "browser":
		return "浏览器"
	}
	return s
}
