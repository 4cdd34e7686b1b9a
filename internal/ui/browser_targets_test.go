package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"zhizhi/internal/chrometest"
	"zhizhi/internal/store/storetest"
)

// browser is a headless Chromium tab on the console with the helpers a
// test drives it by; it collects script errors and refused resources.
type browser struct {
	t        *testing.T
	tab      context.Context
	shots    string
	mu       sync.Mutex
	problems []string
}

// openBrowser starts Chromium for the test (skipped without it, failed
// without it under CI=true) and closes it when the test ends.
func openBrowser(t *testing.T) *browser {
	t.Helper()
	b := &browser{t: t, shots: chrometest.ArtifactDir(t, "admin-console")}
	b.tab = chrometest.Start(t, chrometest.Options{Listen: func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			// A refused form answers 4xx on purpose; the browser logs the
			// status as a network error, which is not a problem of the page.
			if ev.Entry.Level == log.EntryLevelError && !strings.HasSuffix(ev.Entry.URL, "/favicon.ico") &&
				!(ev.Entry.Source == log.EntrySourceNetwork && strings.Contains(ev.Entry.Text, "status of 4")) {
				b.problems = append(b.problems, string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}})
	return b
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.tab, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	// An htmx swap may be under way: wait (briefly) until the element
	// holds text, and read it in the same JavaScript turn, so the node
	// read is the node that was waited for. An element that stays empty
	// is read as it is.
	s, err := chromedp.Run(b.tab, chromedp.PollFunction[string](
		`sel => { const e = document.querySelector(sel); const s = e ? e.innerText : ""; return s.trim() !== "" ? s : null }`,
		chromedp.WithPollingArgs(sel), chromedp.WithPollingTimeout(5*time.Second)))
	if err == nil {
		return s
	}
	s, err = chromedp.Run(b.tab, chromedp.Evaluate[string](
		`(() => { const e = document.querySelector(`+strconv.Quote(sel)+`); return e ? e.innerText : "" })()`))
	if err != nil {
		b.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

func (b *browser) value(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.tab, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read the value of %s: %v", sel, err)
	}
	return s
}

func (b *browser) shoot(name string) {
	b.t.Helper()
	chrometest.Shoot(b.t, b.tab, b.shots, name)
}

// checkClean fails the test for every script error or refused resource.
func (b *browser) checkClean() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("browser reported: %s", p)
	}
}

// TestTargetsInChromium drives the target pages and the column catalog as
// an operator does, with the real crawler's dry-run against the simulated
// web: add a target whose dry-run fails, see it refused, fix it, see it
// pass and save; then subscribe columns in bulk from the catalog, a
// pending one refused first. Every step is photographed.
func TestTargetsInChromium(t *testing.T) {
	b := openBrowser(t)
	w := simWorld(t, storetest.SQLite(t))
	reg := seedCatalog(t, w.st)
	preview := storetest.CatalogColumn(t, w.st, "qingcheng", "qcfgw", "2852", "政策解读")
	mux := http.NewServeMux()
	mux.Handle("/admin/", w.h) // as `zhizhi serve` mounts it
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b.do("log in", chromedp.Navigate(srv.URL+"/admin/targets"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-operator"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#target-table`)))
	if s := b.text(`#target-table`); !strings.Contains(s, "lianzhou_tzgg") || !strings.Contains(s, "立即采集") {
		t.Errorf("the target list shows:\n%s", s)
	}
	b.shoot("t1-targets")

	// A new target whose "sample" is the list page: the dry-run is red.
	const code = "lianzhou_tzgg_copy"
	b.do("open the new-target form", chromedp.Click(chromedp.CSS(`a[href="/admin/targets/new"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#target-form`)),
		chromedp.SetValue(chromedp.CSS(`select[name=site_code]`), "lianzhou"),
		chromedp.SendKeys(chromedp.CSS(`input[name=target_code]`), code),
		chromedp.SendKeys(chromedp.CSS(`input[name=target_name]`), "连州市通知公告（副本）"),
		chromedp.SendKeys(chromedp.CSS(`input[name=entry_url]`), lianzhouList),
		chromedp.SendKeys(chromedp.CSS(`input[name=sample_article_url]`), lianzhouList),
		chromedp.SetValue(chromedp.CSS(`select[name=dept_binding]`), "mapped"),
		chromedp.SetValue(chromedp.CSS(`select[name=local_dept_id]`), "2403"),
		chromedp.SendKeys(chromedp.CSS(`input[name=channel_name]`), "通知公告"),
		chromedp.SetValue(chromedp.CSS(`select[name=schedule]`), "weekly"),
		chromedp.SetValue(chromedp.CSS(`input[name=expected_cadence_days]`), "3"))
	b.shoot("t2-target-new")
	b.do("run the dry-run", chromedp.Click(chromedp.CSS(`button.dryrun-btn`)),
		chromedp.WaitVisible(chromedp.CSS(`.dryrun-verdict.bad`)))
	if s := b.text(`#dryrun`); !strings.Contains(s, "标题非空") || !strings.Contains(s, "未通过") {
		t.Errorf("the red dry-run shows:\n%s", s)
	}
	if loc, _ := chromedp.Run(b.tab, chromedp.Location()); !strings.HasSuffix(loc, "/admin/targets/new") {
		t.Errorf("the dry-run left the page for %s; want it shown in place", loc)
	}
	b.shoot("t3-dryrun-red")

	b.do("save anyway", chromedp.Click(chromedp.CSS(`button.save-btn`)), chromedp.WaitVisible(chromedp.CSS(`.flash.err`)))
	if s := b.text(`.flash.err`); !strings.Contains(s, "试运行未通过") {
		t.Errorf("saving with a red dry-run says %q", s)
	}
	if got := b.value(`input[name=target_code]`); got != code {
		t.Errorf("after the refusal the code is %q; want the person's input kept", got)
	}
	if got := b.value(`select[name=local_dept_id]`); got != "2403" {
		t.Errorf("after the refusal the department is %q; want 2403 kept", got)
	}
	if _, err := w.st.TargetByCode(context.Background(), code); err == nil {
		t.Fatalf("the target was saved with a red dry-run")
	}
	b.shoot("t4-save-refused")

	// Fixed: a real article of the column.
	b.do("fix the sample and dry-run again",
		chromedp.SetValue(chromedp.CSS(`input[name=sample_article_url]`), lianzhouArticle),
		chromedp.Click(chromedp.CSS(`button.dryrun-btn`)),
		chromedp.WaitVisible(chromedp.CSS(`.dryrun-verdict.ok`)))
	if s := b.text(`#dryrun`); !strings.Contains(s, "试运行通过") || !strings.Contains(s, "公开属性") {
		t.Errorf("the green dry-run shows:\n%s", s)
	}
	b.shoot("t5-dryrun-green")
	b.do("save", chromedp.Click(chromedp.CSS(`button.save-btn`)), chromedp.WaitVisible(chromedp.CSS(`table.provenance`)))
	if s := b.text(`.flash.ok`); !strings.Contains(s, "已保存采集目标") {
		t.Errorf("after saving the page says %q", s)
	}
	tg, err := w.st.TargetByCode(context.Background(), code)
	if err != nil || tg.SampleArticleURL != lianzhouArticle || tg.CreatedBy != "user:operator" {
		t.Fatalf("saved target: %+v %v", tg, err)
	}
	b.shoot("t6-target-saved")

	// The catalog: a column of a pending department refuses the batch.
	box := func(col string) string { return `input[name=id][value="` + strconv.FormatInt(reg[col], 10) + `"]` }
	b.do("open the catalog", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/catalog"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#catalog-table`)))
	if s := b.text(`aside.tag-cloud`); !strings.Contains(s, "财政") || !strings.Contains(s, "教育") {
		t.Errorf("the tag cloud shows:\n%s", s)
	}
	b.shoot("t7-catalog")

	// 预览文章 reads the column's newest page into a dialog, in place.
	var newest string
	for _, a := range w.web.Sim.Truth() {
		if a.SiteCode == "qingcheng" && a.DeptPath == "qcfgw" && a.ColumnID == "2852" {
			newest = a.Title
		}
	}
	b.do("preview a column", chromedp.Click(chromedp.CSS(`button[formaction="/admin/catalog/`+strconv.FormatInt(preview, 10)+`/preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#column-preview-dialog table.preview-items`)))
	if s := b.text(`#column-preview-dialog`); newest == "" || !strings.Contains(s, newest) || !strings.Contains(s, "政策解读") {
		t.Errorf("the preview dialog shows:\n%s\nwant the column's article %q", s, newest)
	}
	if loc, _ := chromedp.Run(b.tab, chromedp.Location()); !strings.HasSuffix(loc, "/admin/catalog") {
		t.Errorf("the preview left the catalog for %s; want it shown in a dialog", loc)
	}
	b.shoot("t7b-catalog-preview")
	b.do("close the preview", chromedp.Click(chromedp.CSS(`#column-preview-dialog form[method=dialog] button`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#column-preview-dialog`)))
	b.do("subscribe with a pending column", chromedp.Click(chromedp.CSS(box("3001"))), chromedp.Click(chromedp.CSS(box("4001"))),
		chromedp.Click(chromedp.CSS(`.bulk-bar button.primary`)), chromedp.WaitVisible(chromedp.CSS(`section.refused`)))
	if s := b.text(`section.refused`); !strings.Contains(s, "教育动态") {
		t.Errorf("the refusal shows:\n%s", s)
	}
	b.shoot("t8-catalog-refused")

	b.do("untick the pending column and subscribe", chromedp.Click(chromedp.CSS(box("4001"))),
		chromedp.Click(chromedp.CSS(box("3002"))),
		chromedp.SetValue(chromedp.CSS(`.bulk-bar select[name=schedule]`), "weekly"),
		chromedp.SetValue(chromedp.CSS(`.bulk-bar input[name=content_category]`), "财政信息"),
		chromedp.Click(chromedp.CSS(`.bulk-bar button.primary`)), chromedp.WaitVisible(chromedp.CSS(`section.results`)))
	if s := b.text(`section.results`); strings.Count(s, "已订阅（新建目标）") != 2 {
		t.Errorf("the outcomes show:\n%s", s)
	}
	for _, c := range []string{"qingcheng_qcfgw_3001", "qingcheng_qcfgw_3002"} {
		if tg, err := w.st.TargetByCode(context.Background(), c); err != nil || tg.ContentCategory != "财政信息" {
			t.Errorf("%s after the bulk subscribe: %+v %v", c, tg, err)
		}
	}
	b.shoot("t9-catalog-subscribed")

	// 跑探测脚本 on the adapter's page checks its sites' home pages.
	b.do("run the adapter's detection", chromedp.Navigate(srv.URL+"/admin/adapters/gkmlpt"),
		chromedp.WaitVisible(chromedp.CSS(`#run-detect`)), chromedp.Click(chromedp.CSS(`#run-detect`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.ok`)))
	if s := b.text(`#checks`); !strings.Contains(s, "识别通过") || !strings.Contains(s, "清远市清城区人民政府") {
		t.Errorf("after the detection run the adapter page shows:\n%s", s)
	}
	b.shoot("t10-adapter-detect")

	b.do("filter by a tag", chromedp.Navigate(srv.URL+"/admin/catalog"), chromedp.WaitVisible(chromedp.CSS(`aside.tag-cloud`)),
		chromedp.Click(chromedp.CSS(`aside.tag-cloud a.tag:first-of-type`)),
		chromedp.WaitVisible(chromedp.CSS(`aside.tag-cloud a.tag.active`)))
	if loc, _ := chromedp.Run(b.tab, chromedp.Location()); !strings.Contains(loc, "tag=") {
		t.Errorf("a click on a tag led to %s", loc)
	}
	b.checkClean()
}
