package crawl_test

import (
	"context"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestPreviewColumnReadsTheNewestPage: a column preview shows the column's
// newest articles exactly as the site lists them, asks the site for the
// department's index and one list page and nothing else — no article, no
// attachment — and stores nothing but its crawl_log probes.
func TestPreviewColumnReadsTheNewestPage(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	w := newWorld(t, st, false)
	deptsBefore := siteDepartments(t, st)
	tg, err := st.TargetByCode(ctx, "qingcheng_qcfgw_2850")
	if err != nil {
		t.Fatal(err)
	}
	site, err := st.SiteByID(ctx, tg.SiteID)
	if err != nil {
		t.Fatal(err)
	}
	var truth []sim.TruthArticle
	for _, a := range w.sim.Truth() {
		if a.SiteCode == "qingcheng" && a.DeptPath == "qcfgw" && a.ColumnID == "2850" {
			truth = append(truth, a)
		}
	}
	if len(truth) == 0 {
		t.Fatal("the simulated web has no articles in column 2850")
	}
	sort.SliceStable(truth, func(i, j int) bool { return truth[i].PublishTime.After(truth[j].PublishTime) })
	// The simulated county portals list ten articles a page.
	truth = truth[:min(len(truth), 10)]

	w.sim.ResetLog()
	items, err := w.w.Crawler(nil).PreviewColumn(ctx, site, tg)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, it := range items {
		got = append(got, it.Title+" | "+it.Fields["doc_no"]+" | "+it.URL)
	}
	for _, a := range truth {
		want = append(want, a.Title+" | "+a.DocNo+" | "+a.URL)
	}
	if !slices.Equal(got, want) {
		t.Errorf("preview of column 2850:\n%s\nwant the site's newest page:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	articles := map[string]bool{}
	for _, a := range w.sim.Truth() {
		articles[pathOf(t, a.URL)] = true
		for _, f := range a.Attachments {
			articles[pathOf(t, f.URL)] = true
		}
	}
	asked := 0
	for _, a := range w.sim.AccessLog("www.qingcheng.gov.test") {
		p, _, _ := strings.Cut(a.Path, "?")
		switch {
		case p == "/robots.txt":
		case articles[p]:
			t.Errorf("the preview fetched an article or attachment: %s", a.Path)
		default:
			asked++
		}
	}
	if asked != 2 {
		t.Errorf("the preview asked the site %d times besides robots.txt, want 2 (the department index and one list page)", asked)
	}

	logs, err := st.ListCrawlLogs(ctx, store.CrawlLogFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.Purpose != model.PurposeProbe && l.Purpose != model.PurposeRobots {
			t.Errorf("crawl_log row %s for %s, want only probes", l.Purpose, l.ArticleURL)
		}
	}
	if arts := crawltest.AllArticles(t, st); len(arts) != 0 {
		t.Errorf("%d articles written by a preview", len(arts))
	}
	if cols, err := st.ListColumns(ctx, store.ColumnFilter{}); err != nil || len(cols) != 0 {
		t.Errorf("column registry rows written by a preview: %d %v", len(cols), err)
	}
	if after := siteDepartments(t, st); after != deptsBefore {
		t.Errorf("site_department changed by a preview:\nbefore %s\nafter  %s", deptsBefore, after)
	}
}

func pathOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}
