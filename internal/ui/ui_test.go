package ui

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"zhizhi/internal/model"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// Every page answers a viewer with what a person reads on it.
func TestPagesShowWhatTheyAreFor(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		c := w.login(t, "viewer")
		for _, tc := range []struct {
			name, path string
			want       []string
		}{
			{"overview", "/admin/", []string{"概览", "站点", "启用的采集目标", "停更目标", "news_local", "停更", "需关注的主机", hostCaptcha, "验证码拦截", "队列中的任务", "个停更目标未列出"}},
			{"sites", "/admin/sites", []string{"qingyuan", "清远市人民政府门户网站", "适配器 gkmlpt", "页面模板"}},
			{"site detail", "/admin/sites/qingyuan", []string{"配置模板", "只读", "config/sites/qingyuan.yaml", "cms_adapter: gkmlpt",
				"站点部门", "qyfgw", "清远市发展和改革局", "已映射", "采集目标"}},
			{"site detail stale", "/admin/sites/news", []string{"news_local", "停更 45 天"}},
			{"hosts", "/admin/hosts", []string{"主机状态", hostCaptcha, "验证码拦截", "待人工复核", "robots.txt 无法获取", hostBackoff, "退避中", hostHealthy, "正常"}},
			{"adapters", "/admin/adapters", []string{"CMS 适配器", "gkmlpt", "清远市人民政府门户网站"}},
			{"adapter detail", "/admin/adapters/gkmlpt", []string{"网址特征", "/gkmlpt/index", "window._CONFIG", "列表字段映射",
				"document_number", "详情页选择器", "div#zoom", "适配器 YAML", "adapter_id: gkmlpt"}},
			{"crawl logs", "/admin/crawl-logs", []string{"抓取日志", "www.news.test", "列表页", "失败", "http_5xx"}},
			{"jobs", "/admin/jobs", []string{"任务队列", "抓取", "news_local", "待执行"}},
			{"audit", "/admin/audit", []string{"审计日志", "命令行 root", "目标·修改", "news_local"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := w.get(t, tc.path, c)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: status %d\n%s", tc.path, rec.Code, rec.Body)
				}
				body := rec.Body.String()
				for _, s := range tc.want {
					if !strings.Contains(body, s) {
						t.Errorf("GET %s: page lacks %q", tc.path, s)
					}
				}
				if !strings.Contains(body, `lang="zh-CN"`) {
					t.Errorf("GET %s: page not marked as Simplified Chinese", tc.path)
				}
			})
		}
	})
}

// Text from hostile pages and files reaches the page as text, never as markup.
func TestHostileTextIsEscaped(t *testing.T) {
	w := sqliteWorld(t)
	c := w.login(t, "admin")
	for _, path := range []string{"/admin/", "/admin/sites", "/admin/sites/news", "/admin/crawl-logs", "/admin/audit",
		"/admin/crawl-logs?host=" + url.QueryEscape(hostile)} {
		rec := w.get(t, path, c)
		body := rec.Body.String()
		if strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: hostile script reached the page unescaped", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("GET %s (status %d): the hostile text is not shown (escaped) at all; the test proves nothing", path, rec.Code)
		}
	}
}

func TestSignedOutIsSentToLogin(t *testing.T) {
	w := sqliteWorld(t)
	rec := w.get(t, "/admin/hosts?x=1", nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303", rec.Code)
	}
	if got, want := rec.Header().Get("Location"), "/admin/login?next="+url.QueryEscape("/admin/hosts?x=1"); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	rec = w.post(t, "/admin/hosts/"+hostCaptcha+"/clear", nil, url.Values{"reason": {"looked"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/admin/login" {
		t.Errorf("signed-out POST: status %d Location %q, want 303 to /admin/login", rec.Code, rec.Header().Get("Location"))
	}
	assertStillBlocked(t, w)
	// A part of a page fetched by htmx after the session ended: the whole
	// page goes to the login (HX-Redirect, not a redirect the browser's
	// request would follow and swap the login form into the part), and
	// the login leads back to the page — never to another site.
	for _, tc := range []struct{ current, wantNext string }{
		{"http://console.example/admin/crawl-logs?host=a", "/admin/crawl-logs?host=a"},
		{"http://evil.test//evil.test/x", ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/admin/crawl-logs?host=a&partial=1", nil)
		req.Header.Set("HX-Request", "true")
		req.Header.Set("HX-Current-URL", tc.current)
		rec := httptest.NewRecorder()
		w.h.ServeHTTP(rec, req)
		want := "/admin/login"
		if tc.wantNext != "" {
			want += "?next=" + url.QueryEscape(tc.wantNext)
		}
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("HX-Redirect") != want || rec.Header().Get("Location") != "" {
			t.Errorf("htmx request from %s, signed out: %d HX-Redirect %q Location %q, want 401 HX-Redirect %q",
				tc.current, rec.Code, rec.Header().Get("HX-Redirect"), rec.Header().Get("Location"), want)
		}
	}
	// The login page itself and its style sheet need no session.
	if rec := w.get(t, "/admin/login", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "用户名") {
		t.Errorf("login page: status %d", rec.Code)
	}
	if rec := w.get(t, "/admin/static/console.css", nil); rec.Code != http.StatusOK {
		t.Errorf("style sheet: status %d", rec.Code)
	}
}

// After login a person goes back where they were going, but only ever to
// a page of the console.
func TestLoginGoesOnOnlyToConsolePages(t *testing.T) {
	w := sqliteWorld(t)
	for _, tc := range []struct{ next, want string }{
		{"/admin/hosts", "/admin/hosts"},
		{"/admin/crawl-logs?site=news&status=failed", "/admin/crawl-logs?site=news&status=failed"},
		{"", "/admin/"},
		{"//evil.test", "/admin/"},
		{"//evil.test/admin/", "/admin/"},
		{"https://evil.test/admin/", "/admin/"},
		{"/\\evil.test", "/admin/"},
		{"/admin/\\\\evil.test", "/admin/"},
		{"/admin/\t/evil.test", "/admin/"},
		{"javascript:alert(1)", "/admin/"},
		{"/api/v1/articles", "/admin/"},
		{"/adminx", "/admin/"},
	} {
		rec := w.post(t, "/admin/login", nil, url.Values{"username": {"viewer"}, "password": {"pw-viewer"}, "next": {tc.next}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("next %q: status %d", tc.next, rec.Code)
		}
		if got := rec.Header().Get("Location"); got != tc.want {
			t.Errorf("next %q: sent to %q, want %q", tc.next, got, tc.want)
		}
	}
	// The form carries only a safe next on to the POST.
	body := w.get(t, "/admin/login?next="+url.QueryEscape("//evil.test"), nil).Body.String()
	if strings.Contains(body, "evil.test") {
		t.Errorf("the login form carries an unsafe next on")
	}
}

func TestLoginErrorsInChinese(t *testing.T) {
	w := sqliteWorld(t)
	for _, tc := range []struct {
		name, user, pass string
		status           int
		want             string
	}{
		{"wrong password", "viewer", "nope", http.StatusUnauthorized, "用户名或密码错误"},
		{"unknown user", "nobody", "nope", http.StatusUnauthorized, "用户名或密码错误"},
		// The limiter asks for 4 min 10 s: the page rounds up, never tells a person to come back too early.
		{"rate limited", "limited", "x", http.StatusTooManyRequests, "登录尝试过多，请 5 分钟后再试"},
		{"empty", "", "", http.StatusBadRequest, "请输入用户名和密码"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := w.post(t, "/admin/login", nil, url.Values{"username": {tc.user}, "password": {tc.pass}})
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("page lacks %q", tc.want)
			}
			for _, c := range rec.Result().Cookies() {
				if c.Name == testCookie && c.Value != "" {
					t.Errorf("a refused login started a session")
				}
			}
		})
	}
}

func TestLogoutEndsTheSessionOnlyByPost(t *testing.T) {
	w := sqliteWorld(t)
	c := w.login(t, "viewer")
	if rec := w.get(t, "/admin/logout", c); rec.Code == http.StatusSeeOther {
		t.Fatalf("GET /admin/logout redirected (%s): a link must not sign anyone out", rec.Header().Get("Location"))
	}
	if rec := w.get(t, "/admin/", c); rec.Code != http.StatusOK {
		t.Fatalf("after GET /admin/logout the session is gone (status %d)", rec.Code)
	}
	rec := w.post(t, "/admin/logout", c, nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/admin/login" {
		t.Fatalf("logout: status %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := w.get(t, "/admin/", c); rec.Code != http.StatusSeeOther {
		t.Errorf("after logout the old cookie still opens the console (status %d)", rec.Code)
	}
}

// Clearing a host block is an admin's decision, with a reason, recorded.
func TestHostClear(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		path := "/admin/hosts/" + hostCaptcha + "/clear"
		for _, role := range []string{"viewer", "operator"} {
			c := w.login(t, role)
			rec := w.post(t, path, c, url.Values{"reason": {"looked at it"}})
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
				t.Errorf("%s: status %d, want 403 with 权限不足", role, rec.Code)
			}
			if body := w.get(t, "/admin/hosts", c).Body.String(); strings.Contains(body, "/clear\"") {
				t.Errorf("%s: the hosts page offers the clear button", role)
			}
		}
		assertStillBlocked(t, w)

		admin := w.login(t, "admin")
		if rec := w.get(t, path, admin); rec.Code == http.StatusSeeOther || rec.Code == http.StatusOK {
			t.Errorf("GET %s: status %d; only a POST may clear", path, rec.Code)
		}
		for _, reason := range []string{"", "   "} {
			rec := w.post(t, path, admin, url.Values{"reason": {reason}})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "请填写解除原因") {
				t.Errorf("reason %q: status %d, want 400 asking for a reason", reason, rec.Code)
			}
		}
		rec := w.post(t, path, admin, url.Values{"reason": {strings.Repeat("长", 501)}})
		if rec.Code != http.StatusBadRequest {
			t.Errorf("a 501-character reason: status %d, want 400", rec.Code)
		}
		assertStillBlocked(t, w)

		reason := "已与网站管理员确认验证码已撤除 " + hostile
		rec = w.post(t, path, admin, url.Values{"reason": {reason}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("admin clear: status %d\n%s", rec.Code, rec.Body)
		}
		ctx := context.Background()
		hs, err := st.GetHostState(ctx, hostCaptcha)
		if err != nil {
			t.Fatal(err)
		}
		if hs.BlockReason != "" || hs.NeedsReview || hs.ConsecutiveErrors != 0 {
			t.Errorf("after clear: %+v", hs)
		}
		if robots, _ := st.FailingRobots(ctx); len(robots) != 0 {
			t.Errorf("after clear the failing robots.txt is still recorded: %+v", robots)
		}
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "host", ObjectID: hostCaptcha})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("audit entries for the host: %d, want 1", len(entries))
		}
		e := entries[0]
		if e.Actor != "user:admin" || e.Action != "host.clear" || e.Detail != reason {
			t.Errorf("audit entry: %+v", e)
		}
		var before, after hostAudit
		if json.Unmarshal(e.Before, &before) != nil || json.Unmarshal(e.After, &after) != nil {
			t.Fatalf("audit before %s after %s: not JSON", e.Before, e.After)
		}
		if before.BlockReason != "captcha" || !before.NeedsReview || before.ConsecutiveErrors != 3 || len(before.RobotsFailing) != 1 {
			t.Errorf("audit before: %s", e.Before)
		}
		if after.BlockReason != "" || after.NeedsReview || after.ConsecutiveErrors != 0 || len(after.RobotsFailing) != 0 {
			t.Errorf("audit after: %s", e.After)
		}
		page := w.get(t, rec.Header().Get("Location"), admin).Body.String()
		if !strings.Contains(page, "已解除主机 "+hostCaptcha) {
			t.Errorf("the hosts page does not confirm the clear")
		}
		if page := w.get(t, "/admin/hosts?cleared=evil.test", admin).Body.String(); strings.Contains(page, "已解除主机") {
			t.Errorf("a crafted link makes the hosts page confirm a clear that did not happen")
		}
		if audit := w.get(t, "/admin/audit", admin).Body.String(); !strings.Contains(audit, "已与网站管理员确认验证码已撤除") {
			t.Errorf("the audit page does not show the reason")
		}
		if rec := w.post(t, "/admin/hosts/never.seen.test/clear", admin, url.Values{"reason": {"x"}}); rec.Code != http.StatusNotFound {
			t.Errorf("unknown host: status %d, want 404", rec.Code)
		}
	})
}

func assertStillBlocked(t *testing.T, w *world) {
	t.Helper()
	hs, err := w.st.GetHostState(context.Background(), hostCaptcha)
	if err != nil {
		t.Fatal(err)
	}
	if hs.BlockReason != "captcha" || !hs.NeedsReview {
		t.Fatalf("the host was cleared: %+v", hs)
	}
	if entries, _ := w.st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "host"}); len(entries) != 0 {
		t.Fatalf("a refused clear left an audit entry: %+v", entries)
	}
}

func TestCrawlLogFiltersAndPaging(t *testing.T) {
	w := sqliteWorld(t)
	c := w.login(t, "viewer")
	ctx := context.Background()
	news, _ := w.st.SiteByCode(ctx, "news")
	for i := range 60 {
		l := &logRow{host: "www.paged.test", at: w.now.Add(-time.Duration(i+10) * time.Minute)}
		l.insert(t, w, news.ID)
	}
	body := w.get(t, "/admin/crawl-logs?host=www.paged.test", c).Body.String()
	if n := strings.Count(body, "<code>www.paged.test</code>"); n != 50 {
		t.Fatalf("first page shows %d rows, want 50", n)
	}
	if strings.Contains(body, "www.news.test</code>") {
		t.Errorf("the host filter lets other hosts through")
	}
	next := between(body, `<a href="`, `">更早`)
	if next == "" {
		t.Fatal("no link to the next page")
	}
	body = w.get(t, htmlUnescape(next), c).Body.String()
	if n := strings.Count(body, "<code>www.paged.test</code>"); n != 10 {
		t.Errorf("second page shows %d rows, want 10", n)
	}
	if strings.Contains(body, `">更早`) {
		t.Errorf("the last page links to a next one")
	}
	body = w.get(t, "/admin/crawl-logs?status=ok", c).Body.String()
	if strings.Contains(body, "http_5xx") || strings.Count(body, "<code>www.paged.test</code>") != 50 {
		t.Errorf("the success filter is wrong")
	}
	for _, bad := range []string{"site=nosuch", "target=nosuch", "purpose=bogus", "status=maybe", "before=xyz"} {
		if rec := w.get(t, "/admin/crawl-logs?"+bad, c); rec.Code != http.StatusBadRequest {
			t.Errorf("?%s: status %d, want 400", bad, rec.Code)
		}
	}
}

// A template that does not parse stops the console from being built.
func TestBrokenTemplateFailsNew(t *testing.T) {
	w := sqliteWorld(t)
	files := fstest.MapFS{
		"templates/layout.html": {Data: []byte(`<html>{{template "content" .}}</html>`)},
		"templates/hosts.html":  {Data: []byte(`{{define "content"}}{{range .Data}}{{end}`)},
		"static/console.css":    {Data: []byte(``)},
	}
	_, err := newConsole(Options{Store: w.st, Sessions: w.sessions, Jobs: w.q}, files)
	if err == nil || !strings.Contains(err.Error(), "hosts.html") {
		t.Fatalf("newConsole with a broken template: %v", err)
	}
	if _, err := New(Options{Store: w.st}); err == nil {
		t.Errorf("New without sessions and jobs succeeded")
	}
}

type logRow struct {
	host string
	at   time.Time
}

// insert logs a successful detail request of the news site.
func (l *logRow) insert(t *testing.T, w *world, siteID int64) {
	t.Helper()
	status := 200
	if err := w.st.InsertCrawlLog(context.Background(), &model.CrawlLog{SiteID: &siteID, Host: l.host,
		Purpose: model.PurposeDetail, ArticleURL: "http://" + l.host + "/a.html", HTTPStatus: &status,
		Success: true, OccurredAt: l.at}); err != nil {
		t.Fatal(err)
	}
}

// between returns the text of s between the last start before end and end.
func between(s, start, end string) string {
	i := strings.Index(s, end)
	if i < 0 {
		return ""
	}
	j := strings.LastIndex(s[:i], start)
	if j < 0 {
		return ""
	}
	return s[j+len(start) : i]
}

func htmlUnescape(s string) string { return html.UnescapeString(s) }

// "Crawl now" is an operator's request: it queues the crawl and records
// who asked; a viewer may not, and a disabled target is not queued.
func TestTargetCrawlNow(t *testing.T) {
	w := sqliteWorld(t)
	ctx := context.Background()
	jobs := func() int {
		t.Helper()
		list, err := w.q.Jobs(ctx, unfinishedStates...)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	before := jobs()

	viewer := w.login(t, "viewer")
	if rec := w.post(t, "/admin/targets/lianzhou_tzgg/crawl", viewer, nil); rec.Code != http.StatusForbidden {
		t.Errorf("viewer: status %d, want 403", rec.Code)
	}
	if body := w.get(t, "/admin/sites/lianzhou", viewer).Body.String(); strings.Contains(body, "/crawl\"") {
		t.Errorf("viewer: the site page offers 立即采集")
	}
	if jobs() != before {
		t.Fatalf("a refused crawl-now queued a job")
	}

	op := w.login(t, "operator")
	// One name for the action on every page that offers it.
	for _, path := range []string{"/admin/sites/lianzhou", "/admin/targets", "/admin/targets/lianzhou_tzgg"} {
		if body := w.get(t, path, op).Body.String(); !strings.Contains(body, ">立即采集</button>") || strings.Contains(body, "立即抓取") {
			t.Errorf("%s: the crawl-now button is not called 立即采集 alone", path)
		}
	}
	rec := w.post(t, "/admin/targets/lianzhou_tzgg/crawl", op, nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("operator: status %d\n%s", rec.Code, rec.Body)
	}
	if jobs() != before+1 {
		t.Errorf("jobs after crawl-now: %d, want %d", jobs(), before+1)
	}
	if body := w.get(t, rec.Header().Get("Location"), op).Body.String(); !strings.Contains(body, "已将「连州市人民政府网｜通知公告」加入抓取队列") {
		t.Errorf("the site page does not confirm the queued crawl")
	}
	entries, err := w.st.ListAudit(ctx, store.AuditFilter{ObjectType: "target", ObjectID: "lianzhou_tzgg"})
	if err != nil || len(entries) != 1 || entries[0].Actor != "user:operator" || entries[0].Action != "target.crawl_now" {
		t.Errorf("audit of crawl-now: %+v %v", entries, err)
	}

	// Disable lianzhou_ghjh (sync's own way of disabling a yaml target).
	all, err := w.st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, tg := range all {
		if tg.TargetCode != "lianzhou_ghjh" {
			keep = append(keep, tg.TargetCode)
		}
	}
	if err := w.st.WithTx(ctx, func(tx *store.Tx) error { _, err := tx.DisableYAMLTargetsExcept(ctx, keep); return err }); err != nil {
		t.Fatal(err)
	}
	n := jobs()
	rec = w.post(t, "/admin/targets/lianzhou_ghjh/crawl", op, nil)
	if body := w.get(t, rec.Header().Get("Location"), op).Body.String(); !strings.Contains(body, "已停用") {
		t.Errorf("a disabled target's crawl-now is not refused on the page")
	}
	if jobs() != n {
		t.Errorf("a disabled target was queued")
	}
	if rec := w.post(t, "/admin/targets/nosuch/crawl", op, nil); rec.Code != http.StatusNotFound {
		t.Errorf("unknown target: status %d, want 404", rec.Code)
	}
	if body := w.get(t, "/admin/sites/lianzhou?crawl=lianzhou_tzgg", op).Body.String(); !strings.Contains(body, "加入抓取队列") {
		t.Errorf("sanity: the confirmation is not shown for a target of the site")
	}
	if body := w.get(t, "/admin/sites/news?crawl=lianzhou_tzgg", op).Body.String(); strings.Contains(body, "加入抓取队列") {
		t.Errorf("a crafted link makes a site page confirm another site's crawl")
	}
}

func TestUnknownRoleIsRefusedInChinese(t *testing.T) {
	w := sqliteWorld(t)
	c := w.login(t, "guest")
	for _, path := range []string{"/admin/", "/admin/hosts", "/admin/audit"} {
		rec := w.get(t, path, c)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
			t.Errorf("GET %s as an unknown role: status %d, want 403 with 权限不足", path, rec.Code)
		}
		if strings.Contains(rec.Body.String(), hostCaptcha) {
			t.Errorf("GET %s as an unknown role: the refusal shows the page's data", path)
		}
	}
}

// TestStaticServesOnlyItsFiles: the console's static folder answers its
// files and nothing else — no listing of the folder, and a name that cannot
// be a file (invalid UTF-8, a folder) is "not found", not a server error.
func TestStaticServesOnlyItsFiles(t *testing.T) {
	w := sqliteWorld(t)
	if rec := w.get(t, "/admin/static/console.css", nil); rec.Code != http.StatusOK {
		t.Errorf("console.css: status %d, want 200", rec.Code)
	}
	for _, path := range []string{"/admin/static/", "/admin/static/%c0", "/admin/static/%ff%fe.css", "/admin/static/missing.css"} {
		rec := w.get(t, path, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, rec.Code)
		}
		if body := rec.Body.String(); strings.Contains(body, `href="console.css"`) || strings.Contains(body, "<pre>") {
			t.Errorf("GET %s lists the folder:\n%s", path, body)
		}
	}
}

// TestConsoleHasAFavicon: every console page, the login page too, names the
// console's own icon, and the icon is served.
func TestConsoleHasAFavicon(t *testing.T) {
	w := sqliteWorld(t)
	if rec := w.get(t, "/admin/login", nil); !strings.Contains(rec.Body.String(), `<link rel="icon" type="image/svg+xml" href="/admin/static/favicon.svg">`) {
		t.Errorf("the login page links no favicon")
	}
	rec := w.get(t, "/admin/static/favicon.svg", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<svg") {
		t.Errorf("favicon.svg: status %d", rec.Code)
	}
}

// TestControlCharactersInQueryRefused: a control character in a filter
// is refused with a page saying so, not passed on to cut the filter short.
func TestControlCharactersInQueryRefused(t *testing.T) {
	w := sqliteWorld(t)
	c := w.login(t, "viewer")
	for _, path := range []string{"/admin/departments?q=%00zzzz", "/admin/crawl-logs?host=a%1bb", "/admin/articles?q=%c2%9b", "/admin/audit?x=%ff"} {
		rec := w.get(t, path, c)
		if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "含有控制字符") || !strings.Contains(body, "退出") {
			t.Errorf("GET %s: status %d, want 400 with a page in Chinese for the signed-in viewer\n%.600s", path, rec.Code, body)
		}
	}
}

// TestAuditSpeaksChinese: the audit page says who did what in words, and
// a recorded "<script>" reads as written, not as \u003cscript\u003e.
func TestAuditSpeaksChinese(t *testing.T) {
	w := sqliteWorld(t)
	ctx := context.Background()
	before, _ := json.Marshal(map[string]string{"target_name": "<script>旧名</script> & 说明"})
	for _, e := range []store.AuditEntry{
		{Actor: "user:wangfang", Action: "target.create", ObjectType: "target", ObjectID: "qy_a", Before: before, After: before},
		{Actor: "cli:root", Action: "department.import", ObjectType: "department", ObjectID: "37"},
		{Actor: "apikey:7(alice)", Action: "card.rewrite", ObjectType: "card", ObjectID: "9"},
	} {
		if err := w.st.RecordAudit(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	body := w.get(t, "/admin/audit", w.login(t, "viewer")).Body.String()
	for _, want := range []string{">用户 wangfang<", ">目标·新建<", ">命令行 root<", ">部门·导入<", ">API 密钥 7（alice）<", ">卡片·改写摘要<",
		"&lt;script&gt;旧名&lt;/script&gt; &amp; 说明"} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit page lacks %q", want)
		}
	}
	if strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) {
		t.Errorf("the audit page shows JSON's HTML escapes")
	}
}

// TestFormLabelsAreWords: the new-target form labels its fields in words,
// not with the field names of the YAML (target_code, entry_url, dept_path).
func TestFormLabelsAreWords(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	body := w.get(t, "/admin/targets/new", w.login(t, "operator")).Body.String()
	labels := regexp.MustCompile(`(?s)<label[^>]*>(.*?)</label>`).FindAllStringSubmatch(body, -1)
	if len(labels) < 10 {
		t.Fatalf("the form has %d labels", len(labels))
	}
	tag := regexp.MustCompile(`<[^>]*>`)
	snake := regexp.MustCompile(`\b[a-z]+_[a-z_]+\b`)
	for _, l := range labels {
		if m := snake.FindString(tag.ReplaceAllString(l[1], "")); m != "" {
			t.Errorf("a label shows the field name %q: %s", m, strings.TrimSpace(tag.ReplaceAllString(l[1], "")))
		}
	}
}
