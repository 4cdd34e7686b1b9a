package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/chrometest"
	"zhizhi/internal/store/storetest"
)

// TestWizardInChromium runs the onboarding wizard as an operator does, in
// headless Chromium: from the adapter page to the paste, the progress the
// page polls, the results table, a pending row refused by name with the
// choice kept, a department search, and the preview of the YAML drafts.
// The results table and the preview are photographed.
func TestWizardInChromium(t *testing.T) {
	chrometest.Require(t)
	if testing.Short() {
		t.Skip("reads simulated county sites at the polite pace")
	}
	ww := newWizardWorld(t, storetest.SQLite(t))
	c003 := ww.truthSite(t, "c003.county.gov.test")
	mux := http.NewServeMux()
	mux.Handle("/admin/", ww.h) // as `zhizhi serve` mounts it
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := openBrowser(t)
	tab, shoot, text, do := b.tab, b.shoot, b.text, b.do
	value := b.value

	do("log in", chromedp.Navigate(srv.URL+"/admin/adapters/gkmlpt"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-operator"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#onboard-from-adapter`)))
	do("open the wizard from the adapter", chromedp.Click(chromedp.CSS(`#onboard-from-adapter`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=urls]`)))
	if s := text(`main`); !strings.Contains(s, "从适配器 gkmlpt 批量接入") {
		t.Errorf("the wizard does not say it came from the adapter:\n%s", s)
	}
	do("paste", chromedp.SetValue(chromedp.CSS(`textarea[name=urls]`),
		"http://c001.county.gov.test\nhttp://c002.county.gov.test\nhttp://c003.county.gov.test"))
	shoot("wizard-1-paste")
	do("start", chromedp.Click(chromedp.CSS(`form[action="/admin/onboard"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#wizard-progress, form#choices`)))
	if n, err := chromedp.Run(tab, chromedp.Nodes(chromedp.CSS(`#wizard-progress`), chromedp.AtLeast(0))); err == nil && len(n) > 0 {
		shoot("wizard-2-progress")
	}
	// The progress polls until the run is over, then the page turns to
	// the results on its own.
	do("wait for the results", chromedp.WaitVisible(chromedp.CSS(`form#choices`)))
	if s := text(`table.detections`); !strings.Contains(s, "gkmlpt") || !strings.Contains(s, "未匹配任何 CMS 适配器") {
		t.Errorf("the detections say:\n%s", s)
	}
	shoot("wizard-3-results")

	pendingRow := c003.SiteCode + "/" + c003.Depts[0].DeptPath
	do("leave a row pending", chromedp.SetValue(chromedp.CSS(`select[name=dept-1-0-binding]`), "pending"),
		chromedp.Click(chromedp.CSS(`form#choices button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.err`)))
	if s := text(`.flash.err`); !strings.Contains(s, pendingRow) {
		t.Errorf("the refusal says %q, want the row %s named", s, pendingRow)
	}
	if v := value(`select[name=dept-1-0-binding]`); v != "pending" {
		t.Errorf("after the refusal the row shows %q, want the choice pending kept", v)
	}
	shoot("wizard-4-pending-refused")

	chosen := value(`#dept-0-0-local`)
	do("search a department", chromedp.SendKeys(chromedp.CSS(`#row-dept-0-0 input[type=search]`), "教育局"),
		chromedp.WaitReady(chromedp.CSS(`#dept-0-0-local optgroup[label*="搜索"]`)))
	if s := text(`#dept-0-0-local`); !strings.Contains(s, "教育局") {
		t.Errorf("the search listed:\n%s", s)
	}
	if v := value(`#dept-0-0-local`); v != chosen {
		t.Errorf("the search changed the row's choice from %q to %q", chosen, v)
	}

	do("choose and preview", chromedp.SetValue(chromedp.CSS(`select[name=dept-1-0-binding]`), "external_ref"),
		chromedp.Click(chromedp.CSS(`form#choices button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`pre.yaml`)))
	if s := text(`main`); !strings.Contains(s, "dept_binding: external_ref") || !strings.Contains(s, "sites/"+c003.SiteCode+".yaml") {
		t.Errorf("the preview shows:\n%s", s)
	}
	if n, err := chromedp.Run(tab, chromedp.Nodes(chromedp.CSS(`a[href$="/drafts.zip"][download]`))); err != nil || len(n) != 1 {
		t.Errorf("the preview has no download link (%v)", err)
	}
	shoot("wizard-5-preview")

	b.checkClean() // the pending row's refusal, a 422 by design, is not counted
}
