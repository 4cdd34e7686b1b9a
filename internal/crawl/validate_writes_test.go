package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestValidateWritesOnlyCrawlLog: a validate run of a template target and
// of a gkmlpt target logs its requests in crawl_log and writes nothing a
// crawl would: no article, attachment, url_state (whose validators would
// hide the next change of the page from a crawl), probe or column registry.
func TestValidateWritesOnlyCrawlLog(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, false)
		deptsBefore := siteDepartments(t, st)
		c := w.w.Crawler(nil)
		for _, code := range []string{"lianzhou_tzgg", "qingcheng_qcfgw_2849"} {
			tg, err := st.TargetByCode(ctx, code)
			if err != nil {
				t.Fatalf("target %s: %v", code, err)
			}
			site, err := st.SiteByID(ctx, tg.SiteID)
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Validate(ctx, site, tg, tg.EntryURL, "")
			if err != nil {
				t.Fatalf("validate %s: %v", code, err)
			}
			if !v.Green {
				t.Errorf("validate %s not green: %v", code, v.Problems)
			}
		}

		logs, err := st.ListCrawlLogs(ctx, store.CrawlLogFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) < 4 { // per target at least a list page and a sample article
			t.Fatalf("%d crawl_log rows, want every request logged", len(logs))
		}
		for _, l := range logs {
			if _, err := st.GetURLState(ctx, store.URLHash(l.ArticleURL)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("url_state written for %s (%s): %v", l.ArticleURL, l.Purpose, err)
			}
		}
		counts, err := st.ArticleCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != 0 {
			t.Errorf("articles written: %v", counts)
		}
		if arts := crawltest.AllArticles(t, st); len(arts) != 0 {
			t.Errorf("%d articles (with their attachments) written", len(arts))
		}
		cols, err := st.ListColumns(ctx, store.ColumnFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cols) != 0 {
			t.Errorf("%d column registry rows written", len(cols))
		}
		if after := siteDepartments(t, st); after != deptsBefore {
			t.Errorf("site_department probe recorded:\nbefore %s\nafter  %s", deptsBefore, after)
		}
	})
}

func siteDepartments(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := context.Background()
	sites, err := st.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, s := range sites {
		ds, err := st.ListSiteDepartments(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			probed := "never"
			if d.LastProbedAt != nil {
				probed = d.LastProbedAt.String()
			}
			out += fmt.Sprintf("%d %s status=%s probed=%s classify=%s\n", d.ID, d.DeptPath, d.DetectStatus, probed, d.LastClassifyJSON)
		}
	}
	return out
}
