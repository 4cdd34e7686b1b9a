package ui

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestAdapterDetect: 跑探测脚本 reads the home page of every site configured
// with the adapter, once each, and keeps what it found: sites still on the
// CMS pass, a site whose pages no longer show it (here a template site
// the database claims is gkmlpt) is named as failing on the adapter's page
// and in the adapter list; the run is in the audit trail; a viewer may not
// start one.
func TestAdapterDetect(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	ctx := context.Background()
	if _, err := w.st.DB().ExecContext(ctx, `UPDATE crawl_site SET cms_adapter = 'gkmlpt', yaml_path = NULL, adapter_params_json = '{}' WHERE site_code = 'lianzhou'`); err != nil {
		t.Fatal(err)
	}
	op := w.login(t, "operator")
	if body := w.get(t, "/admin/adapters", op).Body.String(); !strings.Contains(body, "未验证") || !strings.Contains(body, "从未") {
		t.Errorf("before any run the adapter list does not say the adapter is unchecked:\n%s", between(body, "<tbody>", "</tbody>"))
	}

	w.web.Sim.ResetLog()
	rec := w.post(t, "/admin/adapters/gkmlpt/detect", op, nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/admin/adapters/gkmlpt?checked=1#checks" {
		t.Fatalf("run: status %d, location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	checks, err := w.st.AdapterChecks(ctx, "gkmlpt")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.AdapterCheck{}
	for _, c := range checks {
		got[c.SiteCode] = c
		if c.CheckedBy != "user:operator" {
			t.Errorf("%s checked by %q, want user:operator", c.SiteCode, c.CheckedBy)
		}
	}
	for _, code := range []string{"qingcheng", "yingde"} {
		if c := got[code]; c.Outcome != store.CheckMatched || c.Evidence == "" {
			t.Errorf("%s: %+v, want matched with the signature that matched", code, c)
		}
	}
	if c := got["lianzhou"]; c.Outcome != store.CheckUnmatched {
		t.Errorf("lianzhou (not a gkmlpt site): %+v, want unmatched", c)
	}
	// The city portal answers with a cookie challenge, and this console's
	// fetcher has no browser: the run says so rather than guessing.
	if c := got["qingyuan"]; c.Outcome != store.CheckError || !strings.Contains(c.Problem, "Chromium") {
		t.Errorf("qingyuan (behind a cookie challenge, no browser here): %+v, want an error naming the missing browser", c)
	}
	if len(got) != 4 {
		t.Errorf("checked sites %v, want the four sites configured with gkmlpt", got)
	}
	for _, host := range []string{"www.qingcheng.gov.test", "www.yingde.gov.test", "www.lianzhou.gov.test"} {
		homes := 0
		for _, a := range w.web.Sim.AccessLog(host) {
			if a.Path == "/" {
				homes++
			}
		}
		if homes != 1 {
			t.Errorf("%s: home page asked %d times, want once", host, homes)
		}
	}
	entries, err := w.st.ListAudit(ctx, store.AuditFilter{ObjectType: "adapter", ObjectID: "gkmlpt"})
	if err != nil || len(entries) != 1 || entries[0].Action != "adapter.detect" || entries[0].Actor != "user:operator" {
		t.Errorf("audit of the run: %+v %v", entries, err)
	}

	page := htmlUnescape(w.get(t, "/admin/adapters/gkmlpt?checked=1", op).Body.String())
	checksHTML := between(page, `id="checks"`, "</section>")
	for _, want := range []string{"探测完成", "识别通过", "未识别", "读取失败", "连州市", "user:operator"} {
		if !strings.Contains(page, want) {
			t.Errorf("the adapter page lacks %q:\n%s", want, checksHTML)
		}
	}
	list := htmlUnescape(w.get(t, "/admin/adapters", op).Body.String())
	if row := between(list, "<tbody>", "</tbody>"); !strings.Contains(row, "2 个站点未通过") || strings.Contains(row, "从未") {
		t.Errorf("the adapter list does not show the failed check:\n%s", between(list, "<tbody>", "</tbody>"))
	}

	viewer := w.login(t, "viewer")
	if body := w.get(t, "/admin/adapters/gkmlpt", viewer).Body.String(); strings.Contains(body, "跑探测脚本") {
		t.Errorf("a viewer is offered 跑探测脚本")
	}
	w.web.Sim.ResetLog()
	if rec := w.post(t, "/admin/adapters/gkmlpt/detect", viewer, nil); rec.Code != http.StatusForbidden {
		t.Errorf("a viewer's run: status %d, want 403", rec.Code)
	}
	if rec := w.post(t, "/admin/adapters/nosuch/detect", op, nil); rec.Code != http.StatusNotFound {
		t.Errorf("a run of an unknown adapter: status %d, want 404", rec.Code)
	}
	if n := len(w.web.Sim.AllAccess()); n != 0 {
		t.Errorf("refused runs asked the web %d times", n)
	}
}
