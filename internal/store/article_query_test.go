package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestQueryArticles: the search filters and the keyset on both dialects.
// The fixture's provincial site is a reference site, its target has no
// department.
func TestQueryArticles(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s) // one article: "通知", CMS site, no department
		add := func(site, target int64, dept *int64, title, channel, topics, date string) int64 {
			a := &model.Article{SiteID: site, TargetID: target, DeptID: dept, URL: "https://example.gov.test/q/" + title,
				Title: title, ChannelPath: channel, TopicWords: topics, PublishDate: date, Status: model.StatusReady, FetchedAt: f.now}
			if _, _, err := s.UpsertArticle(ctx, a); err != nil {
				t.Fatal(err)
			}
			return a.ID
		}
		d37 := f.dept
		ref := add(f.yamlSite, f.yamlTarget, nil, "省文件", "政策/100%", "营商_环境", "2026-03-01")
		loc := add(f.cmsSite, f.cmsTgt, &d37, "局文件", "政策/规范", "营商环境", "2026-03-02")
		titles := func(q store.ArticleQuery) []int64 {
			rows, err := s.QueryArticles(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range rows {
				if r.ContentText != "" {
					t.Errorf("a list row carries its text")
				}
				ids = append(ids, r.ID)
			}
			return ids
		}
		cases := []struct {
			name string
			q    store.ArticleQuery
			want []int64
		}{
			{"all, newest first", store.ArticleQuery{}, []int64{loc, ref, f.article}},
			{"dept", store.ArticleQuery{DeptID: &d37}, []int64{loc}},
			{"percent is literal", store.ArticleQuery{ChannelPath: "%"}, []int64{ref}},
			{"underscore is literal", store.ArticleQuery{TopicWord: "营商_"}, []int64{ref}},
			{"substring", store.ArticleQuery{TopicWord: "环境"}, []int64{loc, ref}},
			{"external reference", store.ArticleQuery{ExternalRef: true}, []int64{ref}},
			{"date to is inclusive", store.ArticleQuery{DateTo: "2026-03-01"}, []int64{ref}},
			{"date from is inclusive", store.ArticleQuery{DateFrom: "2026-03-02"}, []int64{loc}},
			{"keyset", store.ArticleQuery{BeforeID: loc}, []int64{ref, f.article}},
			{"limit", store.ArticleQuery{Limit: 1}, []int64{loc}},
			{"not exported", store.ArticleQuery{NotExported: true, SiteID: &f.yamlSite}, []int64{ref}},
		}
		for _, c := range cases {
			if got := titles(c.q); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		if err := s.MarkExported(ctx, []int64{ref}, f.now); err != nil {
			t.Fatal(err)
		}
		if got := titles(store.ArticleQuery{NotExported: true}); !slices.Equal(got, []int64{loc, f.article}) {
			t.Errorf("not exported after marking: %v", got)
		}
	})
}

// TestQueryCrawlLogs: filters, the half-open time range and the keyset.
func TestQueryCrawlLogs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		var ids []int64
		for i, host := range []string{"a.gov.test", "b.gov.test", "a.gov.test"} {
			l := &model.CrawlLog{SiteID: &f.yamlSite, TargetID: &f.yamlTarget, Host: host, Purpose: "list",
				Success: i != 1, OccurredAt: f.now.Add(time.Duration(i) * time.Hour)}
			if err := s.InsertCrawlLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, l.ID)
		}
		failed, from, to := false, f.now.Add(time.Hour), f.now.Add(2*time.Hour)
		cases := []struct {
			name string
			q    store.CrawlLogQuery
			want []int64
		}{
			{"all", store.CrawlLogQuery{}, []int64{ids[2], ids[1], ids[0]}},
			{"host", store.CrawlLogQuery{Host: "a.gov.test"}, []int64{ids[2], ids[0]}},
			{"failed", store.CrawlLogQuery{Success: &failed}, []int64{ids[1]}},
			{"from inclusive, to exclusive", store.CrawlLogQuery{From: &from, To: &to}, []int64{ids[1]}},
			{"keyset", store.CrawlLogQuery{BeforeID: ids[2], Limit: 1}, []int64{ids[1]}},
			{"target", store.CrawlLogQuery{TargetID: &f.cmsTgt}, nil},
		}
		for _, c := range cases {
			rows, err := s.QueryCrawlLogs(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range rows {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	})
}

// TestDepartmentQueries: a department by id, its targets, and an import
// that commits or rolls back with the caller's audit entry.
func TestDepartmentQueries(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		d, err := s.DepartmentByID(ctx, f.dept)
		if err != nil || d.DeptName != "清远市发展和改革局" {
			t.Fatalf("department %d: %+v %v", f.dept, d, err)
		}
		if _, err := s.DepartmentByID(ctx, 4242); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("absent department: %v, want ErrNotFound", err)
		}
		tgts, err := s.DepartmentTargets(ctx, f.dept)
		if err != nil || len(tgts) != 1 || tgts[0].ID != f.cmsTgt {
			t.Errorf("targets of %d: %+v %v, want the CMS target", f.dept, tgts, err)
		}
		boom := errors.New("audit refused")
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			if _, _, err := tx.ImportDepartments(ctx, []model.Department{{DeptID: 50, DeptName: "清远市审计局", State: 1}}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("import: %v", err)
		}
		if _, err := s.DepartmentByID(ctx, 50); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an import whose transaction failed left department 50: %v", err)
		}
	})
}
