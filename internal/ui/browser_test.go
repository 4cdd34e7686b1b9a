package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/chrometest"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// TestConsoleInChromium drives the console as a person does, in headless
// Chromium: log in, read the overview, open the hosts page, clear a
// CAPTCHA block with a reason; every page it passes is photographed.
func TestConsoleInChromium(t *testing.T) {
	chrometest.Require(t)
	w := sqliteWorld(t)
	seedArticles(t, w)
	mux := http.NewServeMux()
	mux.Handle("/admin/", w.h) // as `zhizhi serve` mounts it
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := openBrowser(t)
	tab, shoot, text, do := b.tab, b.shoot, b.text, b.do

	// Signed out, the console sends the browser to the login form.
	do("open the console", chromedp.Navigate(srv.URL+"/admin/"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)))
	shoot("01-login")
	do("log in",
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-admin"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.stats`)))
	if s := text(`main`); !strings.Contains(s, "停更目标") || !strings.Contains(s, hostCaptcha) {
		t.Errorf("overview after login shows:\n%s", s)
	}
	if loaded, err := chromedp.Run(tab, chromedp.Evaluate[bool](`typeof htmx === "object"`)); err != nil || !loaded {
		t.Errorf("the vendored htmx did not load (%v)", err)
	}
	shoot("02-overview")

	do("open the hosts page", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/hosts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.hosts`)))
	if s := text(`table.hosts`); !strings.Contains(s, "验证码拦截") {
		t.Errorf("hosts page shows:\n%s", s)
	}
	shoot("03-hosts")

	form := `form[action="/admin/hosts/` + hostCaptcha + `/clear"]`
	reason := "已人工核查：验证码已撤除"
	do("clear the block",
		chromedp.SendKeys(chromedp.CSS(form+` input[name=reason]`), reason),
		chromedp.Click(chromedp.CSS(form+` button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.ok`)))
	if s := text(`.flash.ok`); !strings.Contains(s, hostCaptcha) {
		t.Errorf("after the clear the page says %q", s)
	}
	shoot("04-hosts-cleared")

	hs, err := w.st.GetHostState(context.Background(), hostCaptcha)
	if err != nil {
		t.Fatal(err)
	}
	if hs.BlockReason != "" || hs.NeedsReview {
		t.Errorf("the host is still blocked after the clear: %+v", hs)
	}
	entries, err := w.st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "host", ObjectID: hostCaptcha})
	if err != nil || len(entries) != 1 || entries[0].Actor != "user:admin" || entries[0].Detail != reason {
		t.Errorf("audit of the clear: %+v %v", entries, err)
	}

	// The other pages, photographed for the record and checked to render.
	for i, p := range []struct{ path, sel, want string }{
		{"/admin/sites", "main table", "清远市人民政府门户网站"},
		{"/admin/sites/qingyuan", "pre.yaml", "cms_adapter: gkmlpt"},
		{"/admin/adapters", "main table", "gkmlpt"},
		{"/admin/adapters/gkmlpt", "pre.yaml", "adapter_id: gkmlpt"},
		{"/admin/crawl-logs", "#log-table", "http_5xx"},
		{"/admin/jobs", "main table", "news_local"},
		{"/admin/audit", "main table", "主机·解除封锁"},
		{"/admin/departments", "#dept-tree", "清远市发展和改革局"},
		{"/admin/stale-targets", "main table", "qingyuan_qyfgw_14002"},
	} {
		do("open "+p.path, chromedp.Navigate(srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.sel)))
		if s := text(p.sel); !strings.Contains(s, p.want) {
			t.Errorf("%s: %s lacks %q", p.path, p.sel, p.want)
		}
		name := strings.ReplaceAll(strings.TrimPrefix(p.path, "/admin/"), "/", "-")
		shoot(string(rune('a'+i)) + "-" + name)
	}

	// A filter applied through htmx replaces the table in place.
	do("filter the crawl log",
		chromedp.Navigate(srv.URL+"/admin/crawl-logs"), chromedp.WaitVisible(chromedp.CSS(`#log-table`)),
		chromedp.SetValue(chromedp.CSS(`select[name=status]`), "ok"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("select[name=status]").dispatchEvent(new Event("change", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS(`#log-table td.empty`)))
	if loc, err := chromedp.Run(tab, chromedp.Location()); err != nil || !strings.Contains(loc, "status=ok") {
		t.Errorf("after filtering, the address is %q (%v); want it to keep the filter", loc, err)
	}

	// Articles: find them by department and channel, open one, then its
	// department, whose stale columns must stand out in red.
	do("open the articles", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/articles"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#article-table`)))
	if s := text(`#article-table`); !strings.Contains(s, artJYJ) || !strings.Contains(s, artPrice) {
		t.Errorf("the article list shows:\n%s", s)
	}
	shoot("05-articles")
	do("filter by department and channel",
		chromedp.SendKeys(chromedp.CSS(`input[name=dept]`), "清远市发展和改革局"),
		chromedp.SendKeys(chromedp.CSS(`input[name=channel_path]`), "规范性"),
		chromedp.Click(chromedp.CSS(`#article-filters button[type=submit]`)),
		chromedp.Poll[chromedp.Void](`new URLSearchParams(location.search).get("channel_path") === "规范性" &&
			document.querySelectorAll("#article-table td.title").length === 1`))
	if s := text(`#article-table`); !strings.Contains(s, artFGW) || strings.Contains(s, artPrice) || strings.Contains(s, artJYJ) {
		t.Errorf("filtered by department and channel, the list shows:\n%s", s)
	}
	if loc, err := chromedp.Run(tab, chromedp.Location()); err != nil || !strings.Contains(loc, "dept=") {
		t.Errorf("after filtering, the address is %q (%v); want it to keep the department", loc, err)
	}
	shoot("06-articles-filtered")
	do("open the article", chromedp.Click(chromedp.CSS(`#article-table td.title a`)),
		chromedp.WaitVisible(chromedp.CSS(`.article-text`)))
	if s := text(`main`); !strings.Contains(s, "清发改〔2026〕1号") || !strings.Contains(s, "附件1：实施细则.pdf") {
		t.Errorf("the article page shows:\n%s", s)
	}
	shoot("07-article")
	do("open its department", chromedp.Click(chromedp.CSS(`main a[href="/admin/departments/37"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.dept-targets`)))
	// The stale badge is drawn red (#c62828), not just marked so.
	if red, err := chromedp.Run(tab, chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("tr.target-stale .badge.stale")).color`)); err != nil || red != "rgb(198, 40, 40)" {
		t.Errorf("the stale badge on the department page is drawn %q (%v), want red", red, err)
	}
	shoot("08-department")
	// Crawl now, from the department's page: the job is queued ahead of
	// the scheduled ones and the page says so.
	do("crawl a stale column now",
		chromedp.Click(chromedp.CSS(`table.dept-targets tr.target-stale button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.ok`)))
	if s := text(`.flash.ok`); !strings.Contains(s, "加入抓取队列") {
		t.Errorf("after 立即采集 the page says %q", s)
	}
	jobs, err := w.q.Jobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(jobs, func(j queue.JobInfo) bool {
		return j.Kind == queue.KindCrawl && strings.HasPrefix(j.TargetCode, "qingyuan_qyfgw_")
	}) {
		t.Errorf("after 立即采集 the queue holds %+v, want a crawl of the department's column", jobs)
	}
	do("search the department tree", chromedp.Click(chromedp.CSS(`main a[href="/admin/departments"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#dept-tree`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "教育局"),
		chromedp.Poll[chromedp.Void](`location.search.includes("q=") && document.querySelectorAll("#dept-tree tbody tr").length < 40`))
	if s := text(`#dept-tree`); !strings.Contains(s, "清远市教育局") || strings.Contains(s, "清远市财政局") {
		t.Errorf("searching 教育局, the tree shows:\n%s", s)
	}
	shoot("09-departments-search")

	b.checkClean()
}
