package ui

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"zhizhi/internal/store/storetest"
)

// TestCatalogPreview: an operator's 预览文章 on a catalog row reads the
// column's newest page from the (simulated) site and shows its articles;
// a column the site no longer has shows why there is nothing; a viewer may
// not make the console ask a site for anything.
func TestCatalogPreview(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	id := storetest.CatalogColumn(t, w.st, "yingde", "ydjyj", "3202", "人事招聘")
	gone := storetest.CatalogColumn(t, w.st, "yingde", "ydjyj", "3299", "已撤销栏目")
	path := "/admin/catalog/" + strconv.FormatInt(id, 10) + "/preview"

	op := w.login(t, "operator")
	if body := w.get(t, "/admin/catalog", op).Body.String(); !strings.Contains(body, `formaction="`+path+`"`) {
		t.Errorf("the catalog offers no 预览文章 for the column to an operator")
	}
	rec := w.post(t, path, op, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("preview: status %d\n%s", rec.Code, rec.Body)
	}
	body := htmlUnescape(rec.Body.String())
	n := 0
	for _, a := range w.web.Sim.Truth() {
		if a.SiteCode == "yingde" && a.DeptPath == "ydjyj" && a.ColumnID == "3202" {
			n++
			if !strings.Contains(body, a.Title) || !strings.Contains(body, a.URL) {
				t.Errorf("the preview lacks the site's article %q (%s)", a.Title, a.URL)
			}
		}
	}
	if n == 0 || !strings.Contains(body, "共 "+strconv.Itoa(n)+" 篇") {
		t.Errorf("the preview does not count the column's %d articles:\n%s", n, between(body, `id="column-preview"`, "</section>"))
	}

	rec = w.post(t, "/admin/catalog/"+strconv.FormatInt(gone, 10)+"/preview", op, nil)
	if body := htmlUnescape(rec.Body.String()); rec.Code != http.StatusOK || !strings.Contains(body, "该栏目的列表不存在") ||
		!strings.Contains(body, "404") {
		t.Errorf("preview of a column the site no longer has: status %d\n%s", rec.Code, between(body, `id="column-preview"`, "</section>"))
	}

	viewer := w.login(t, "viewer")
	if body := w.get(t, "/admin/catalog", viewer).Body.String(); strings.Contains(body, "预览文章") {
		t.Errorf("the catalog offers 预览文章 to a viewer")
	}
	w.web.Sim.ResetLog()
	if rec := w.post(t, path, viewer, nil); rec.Code != http.StatusForbidden {
		t.Errorf("a viewer's preview: status %d, want 403", rec.Code)
	}
	if rec := w.post(t, "/admin/catalog/99999/preview", op, nil); rec.Code != http.StatusNotFound {
		t.Errorf("the preview of an unknown column: status %d, want 404", rec.Code)
	}
	if n := len(w.web.Sim.AllAccess()); n != 0 {
		t.Errorf("refused previews asked the web %d times", n)
	}
}
