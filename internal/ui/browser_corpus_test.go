package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCorpusInChromium drives the corpus pages as an admin does, in
// headless Chromium at 1366 px: take an article in, find a work and read
// its trace, decide a duplicate candidate, build, verify and activate a
// release, then search it. Every step is photographed.
func TestCorpusInChromium(t *testing.T) {
	b := openBrowser(t)
	cw := newCorpusWorld(t, storetest.SQLite(t))
	ctx := context.Background()
	mux := http.NewServeMux()
	mux.Handle("/admin/", cw.h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b.do("log in at 1366 px", chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(srv.URL+"/admin/corpus"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-admin"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.intake-article`)))
	if s := b.text(`.active-release`); !strings.Contains(s, cw.version) || !strings.Contains(s, "当前生效的发布") {
		t.Errorf("the corpus page's active release reads %q, want %s", s, cw.version)
	}
	b.do("take an article in",
		chromedp.SendKeys(chromedp.CSS(`form.intake-article input[name=article]`), fmt.Sprint(cw.article)),
		chromedp.Click(chromedp.CSS(`form.intake-article button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.intake-result`)))
	if s := b.text(`section.intake-result`); !strings.Contains(s, "新作品\n1 件") && !strings.Contains(s, "新作品\t1 件") {
		t.Errorf("the intake result reads:\n%s", s)
	}
	b.shoot("c1-corpus-intake")

	b.do("find the hostile work", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/corpus/works"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#work-table`)),
		chromedp.SendKeys(chromedp.CSS(`#work-filters input[name=q]`), "医保报销"),
		// The list before the filter may hold the work too: wait for the
		// new page, which does not carry this mark.
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.before = "1"`),
		chromedp.Click(chromedp.CSS(`#work-filters button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`body:not([data-before]) #work-`+cw.hostileWork)))
	if s := b.text(`#work-` + cw.hostileWork); !strings.Contains(s, hostile) || !strings.Contains(s, "可发布") {
		t.Errorf("the work's row reads %q", s)
	}
	b.shoot("c2-works")
	b.do("open its trace", chromedp.Click(chromedp.CSS(`#work-`+cw.hostileWork+` td.title a`)),
		chromedp.WaitVisible(chromedp.CSS(`ol.trace`)))
	trace := b.text(`ol.trace`)
	for _, want := range []string{"来源", "抓取", "解析", "快照", "权利", "质量检查", "审核", "发布", "WARC 记录（响应）", "收入发布 " + cw.version} {
		if !strings.Contains(trace, want) {
			t.Errorf("the trace lacks %q:\n%s", want, trace)
		}
	}
	// A planted article was never fetched: its crawl step says so, the
	// other seven pass.
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("ol.trace > li.step-ok").length`)); err != nil || n != 7 {
		t.Errorf("%d of the 8 steps drawn as passed (%v), want 7", n, err)
	}
	if s := b.text(`ol.trace li[data-step=crawl]`); !strings.Contains(s, "缺少证据") {
		t.Errorf("the planted work's crawl step reads %q", s)
	}
	b.shoot("c3-work-trace")

	k := cw.openCandidate(t)
	b.do("open the candidates", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/corpus/candidates"]`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#candidate-%d`, k.ID))))
	if s := b.text(`p.never-merge`); !strings.Contains(s, "系统从不自动合并作品") {
		t.Errorf("the candidates page says %q", s)
	}
	if s := b.text(fmt.Sprintf(`#candidate-%d`, k.ID)); !strings.Contains(s, "正文相同") || !strings.Contains(s, hostile) {
		t.Errorf("the candidate reads:\n%s", s)
	}
	b.shoot("c4-candidates")
	b.do("decide: different works",
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#candidate-%d form input[value=different] + button`, k.ID))),
		chromedp.WaitVisible(chromedp.CSS(`.flash.ok`)))
	if s := b.text(`.flash.ok`); !strings.Contains(s, "不同作品") {
		t.Errorf("after the decision the page says %q", s)
	}
	b.shoot("c4-candidate-decided")

	// The crawled work the copy named may share its 文号 with yet another
	// work (the simulated web reuses some numbers): a person decides those
	// pairs too, for the work waits for every open candidate of its own.
	others, err := cw.st.ListCorpusCandidates(context.Background(), store.CandidateOpen, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range others {
		if o.WorkA == cw.copiedWork || o.WorkB == cw.copiedWork {
			if err := cw.st.DecideCorpusCandidate(context.Background(), o.ID, store.CandidateDifferent, "user:reviewer"); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The crawled work the copy named: every step up to review passes now
	// that people decided; it waited for them when the release was built,
	// so its release step says it is in none yet. Its crawl step leads to
	// the crawl log's row.
	b.do("open the crawled work's trace", chromedp.Navigate(srv.URL+workURL(cw.copiedWork)), chromedp.WaitVisible(chromedp.CSS(`ol.trace`)))
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("ol.trace > li.step-ok").length`)); err != nil || n != 7 {
		t.Errorf("%d of the crawled work's 8 steps drawn as passed (%v), want all but the release:\n%s", n, err, b.text(`ol.trace`))
	}
	if s := b.text(`ol.trace li[data-step=release]`); !strings.Contains(s, "尚未收入任何发布") {
		t.Errorf("the release step of a work held when the release was built reads %q", s)
	}
	if s := b.text(`ol.trace li[data-step=crawl]`); !strings.Contains(s, "抓取账本") || !strings.Contains(s, "HTTP 200") {
		t.Errorf("the crawl step reads %q", s)
	}
	b.shoot("c4-crawled-work-trace")
	b.do("follow its crawl log evidence", chromedp.Click(chromedp.CSS(`ol.trace li[data-step=crawl] a[href*="crawl-logs?id="]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log-table`)))
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("#log-table tbody tr").length`)); err != nil || n != 1 {
		t.Errorf("the crawl log shows %d rows (%v), want the one row of the evidence", n, err)
	}

	b.do("build a release", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/corpus/releases"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#release-table`)),
		chromedp.Click(chromedp.CSS(`form.build-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`section.release-facts`)))
	version := b.text(`.release-version`)
	if version == cw.version || !strings.Contains(b.text(`.flash.ok`), "已生成发布 "+version) || b.text(`.release-state`) != "待校验" {
		t.Fatalf("after the build: version %q, the page says %q", version, b.text(`main`))
	}
	b.shoot("c5-release-built")
	b.do("verify it", chromedp.Click(chromedp.CSS(`form.verify-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`form.activate-form button`)))
	if s := b.text(`.flash.ok`); !strings.Contains(s, "校验通过") {
		t.Errorf("after verify the page says %q", s)
	}
	b.shoot("c6-release-verified")
	b.do("activate it", chromedp.Click(chromedp.CSS(`form.activate-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.release-active`)))
	if s := b.text(`tr.release-active`); !strings.Contains(s, version) || !strings.Contains(s, "当前生效") {
		t.Errorf("the active row reads %q, want %s", s, version)
	}
	if s := b.text(`.flash.ok`); !strings.Contains(s, "已启用发布 "+version) {
		t.Errorf("after activation the page says %q", s)
	}
	b.shoot("c7-releases")
	if act, err := cw.st.ActiveCorpusRelease(ctx); err != nil || act.Version != version || act.ActivatedBy != "user:admin" {
		t.Errorf("active release %+v (%v), want %s by user:admin", act, err, version)
	}

	b.do("search 医保", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/corpus/search"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-form`)),
		chromedp.SendKeys(chromedp.CSS(`#search-form input[name=q]`), "医保"),
		chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-hits li.hit`)))
	if s := b.text(`.search-version`); s != version {
		t.Errorf("the search reads release %q, want the one just activated, %s", s, version)
	}
	if s := b.text(`#search-hits li.hit mark`); s != "医保" {
		t.Errorf("the first highlight reads %q, want 医保", s)
	}
	hit := b.text(`#search-hits`)
	if !strings.Contains(hit, hostile) || !strings.Contains(hit, "引用（GB/T 7714）") || !strings.Contains(hit, "下载 BibTeX") {
		t.Errorf("the hits read:\n%s", hit)
	}
	// The hostile title is text: no script of the page's made an element.
	if n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](`document.querySelectorAll("main script").length`)); err != nil || n != 0 {
		t.Errorf("%d script elements in the page's main (%v)", n, err)
	}
	b.shoot("c8-search")
	b.checkClean()
}
