package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/chrometest"
)

// TestStudioInChromium drives the Studio as an operator onboarding a new
// portal does, at 1366 px: fetch a notice and read its Markdown,
// metadata and evidence; fetch a hostile page whose scripts must not run
// in the console; crawl three pages; start a crawl that hangs and cancel
// it. Every step is photographed.
func TestStudioInChromium(t *testing.T) {
	chrometest.Require(t)
	w, site := studioWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/admin/", w.h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := openBrowser(t)
	run := func(what, u string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		b.do(what, append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + "/admin/studio"),
			chromedp.WaitVisible(chromedp.CSS(`form.studio`)), chromedp.SetValue(chromedp.CSS(`input[name=url]`), u)},
			steps...)...)
	}
	fits := func(what string) {
		t.Helper()
		wide, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil || wide > 1366 {
			t.Errorf("%s: the page is %d px wide at 1366 px (%v); want no sideways scrolling", what, wide, err)
		}
	}

	b.do("log in at 1366 px", chromedp.EmulateViewport(1366, 900),
		chromedp.Navigate(srv.URL+"/admin/"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-operator"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav.side a[href="/admin/studio"]`)),
		chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/studio"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.studio`)))
	// Only the chosen mode's options show: fetch has no crawl limits.
	if shown, err := chromedp.Run(b.tab, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector(".crawl-opts")).display !== "none"`)); err != nil || shown {
		t.Errorf("in fetch mode the crawl options show (%v)", err)
	}
	b.shoot("studio-01-empty")

	run("fetch the notice", "http://"+studioHost+"/article.html",
		chromedp.Click(chromedp.CSS(`form.studio button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#studio-result`)))
	if s := b.text(`#studio-markdown`); !strings.Contains(s, "# 关于开展2026年春季植树活动的通知") || !strings.Contains(s, "苗木调配") {
		t.Errorf("the Markdown shows:\n%s", s)
	}
	if s := b.text(`#studio-meta`); !strings.Contains(s, "清林〔2026〕3号") || !strings.Contains(s, "11441800MB2C12345X/2026-00012") || !strings.Contains(s, "utf-8") {
		t.Errorf("the metadata shows:\n%s", s)
	}
	if s := b.text(`#studio-evidence`); !strings.Contains(s, sum(studioArticle)) || !strings.Contains(s, "直接请求") ||
		!strings.Contains(s, "http://"+studioHost+"/article.html") {
		t.Errorf("the evidence shows:\n%s", s)
	}
	if s := b.text(`#studio-cost`); !strings.Contains(s, "1 次") {
		t.Errorf("the cost shows:\n%s", s)
	}
	fits("the notice")
	b.shoot("studio-02-fetch")

	run("fetch the hostile page", "http://"+studioHost+"/hostile.html",
		chromedp.Click(chromedp.CSS(`input[name=raw_html]`)),
		chromedp.Click(chromedp.CSS(`form.studio button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#studio-result`)))
	if pwned, err := chromedp.Run(b.tab, chromedp.Evaluate[string](`String(window.__pwned)`)); err != nil || pwned != "undefined" {
		t.Errorf("the hostile page's script ran in the console: window.__pwned = %q (%v)", pwned, err)
	}
	if s := b.text(`#studio-result`); !strings.Contains(s, `<script>window.__pwned = "page script";</script>`) ||
		!strings.Contains(s, `onerror="window.__pwned='markup img'"`) {
		t.Errorf("the hostile page's markup is not shown as text:\n%s", s)
	}
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("main img, main script, main a[href^=javascript]").length`)); err != nil || n != 0 {
		t.Errorf("the hostile page put %d elements into the console (%v)", n, err)
	}
	b.shoot("studio-03-hostile")

	run("crawl three pages", "http://"+studioHost+"/list/",
		chromedp.Click(chromedp.CSS(`input[name=mode][value=crawl]`)),
		chromedp.SetValue(chromedp.CSS(`input[name=limit]`), "3"),
		chromedp.Click(chromedp.CSS(`form.studio button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#studio-crawl`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#studio-crawl-state").innerText.includes("已完成")`))
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("#studio-pages > li").length`)); err != nil || n != 3 {
		t.Errorf("the crawl of limit 3 lists %d pages (%v)", n, err)
	}
	if s := b.text(`#studio-pages`); !strings.Contains(s, "http://"+studioHost+"/list/") {
		t.Errorf("the crawl's pages:\n%s", s)
	}
	fits("the crawl")
	b.shoot("studio-04-crawl")

	run("start a crawl that hangs", "http://"+studioHost+"/slow/",
		chromedp.Click(chromedp.CSS(`input[name=mode][value=crawl]`)),
		chromedp.Click(chromedp.CSS(`form.studio button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#studio-crawl button.danger`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#studio-pages > li").length === 1`))
	if s := b.text(`#studio-crawl-state`); !strings.Contains(s, "进行中") {
		t.Errorf("the hanging crawl says %q", s)
	}
	b.shoot("studio-05-crawl-running")
	// The panel is swapped every second: press the button in one turn,
	// then read the page the cancel leads to once it is there.
	b.do("cancel it", chromedp.Evaluate[chromedp.Void](`document.querySelector("#studio-crawl button.danger").click()`))
	state := ""
	for range 100 {
		state, _ = chromedp.Run(b.tab, chromedp.Evaluate[string](`(document.querySelector("#studio-crawl-state") || {}).innerText || ""`))
		if strings.Contains(state, "已取消") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(state, "已取消") {
		t.Errorf("after 取消爬取 the job says %q", state)
	}
	site.free()
	b.shoot("studio-06-crawl-cancelled")

	b.checkClean()
}
