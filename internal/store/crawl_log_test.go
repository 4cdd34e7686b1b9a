package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCrawlLogFilters: the console's filters (site, purpose, result) and
// its keyset pages, which list every row exactly once even when rows share
// a timestamp.
func TestCrawlLogFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		at := f.now.Add(time.Hour)
		// 12 rows: pairs share a time, purposes and results alternate, the
		// first 6 belong to the CMS site, the rest to the YAML site.
		var want []string
		for i := range 12 {
			l := model.CrawlLog{Host: "h.test", ArticleURL: fmt.Sprintf("u%02d", i), Purpose: model.PurposeList,
				Success: i%3 != 0, OccurredAt: at.Add(time.Duration(i/2) * time.Second)}
			l.SiteID = &f.cmsSite
			if i >= 6 {
				l.SiteID = &f.yamlSite
			}
			if i%2 == 1 {
				l.Purpose = model.PurposeDetail
			}
			if err := s.InsertCrawlLog(ctx, &l); err != nil {
				t.Fatal(err)
			}
			want = append(want, l.ArticleURL)
		}
		count := func(f store.CrawlLogFilter) int {
			t.Helper()
			logs, err := s.ListCrawlLogs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(logs)
		}
		yes, no := true, false
		for name, tc := range map[string]struct {
			f    store.CrawlLogFilter
			want int
		}{
			"site":          {store.CrawlLogFilter{SiteID: &f.yamlSite}, 6},
			"purpose":       {store.CrawlLogFilter{Purpose: model.PurposeDetail}, 6},
			"failed":        {store.CrawlLogFilter{Success: &no}, 4},
			"succeeded":     {store.CrawlLogFilter{Success: &yes}, 8},
			"site and kind": {store.CrawlLogFilter{SiteID: &f.cmsSite, Purpose: model.PurposeList, Success: &no}, 1}, // row 0 only
		} {
			if got := count(tc.f); got != tc.want {
				t.Errorf("%s: %d rows, want %d", name, got, tc.want)
			}
		}

		var seen []string
		page := store.CrawlLogFilter{Host: "h.test", Limit: 5}
		for range 10 {
			logs, err := s.ListCrawlLogs(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range logs {
				seen = append(seen, l.ArticleURL)
			}
			if len(logs) < 5 {
				break
			}
			last := logs[len(logs)-1]
			page.BeforeAt, page.BeforeID = &last.OccurredAt, last.ID
		}
		if len(seen) != 12 {
			t.Fatalf("pages listed %d rows, want 12: %v", len(seen), seen)
		}
		for i, u := range seen {
			if w := want[11-i]; u != w {
				t.Fatalf("row %d of the pages is %s, want %s (newest first, each once): %v", i, u, w, seen)
			}
		}
	})
}
