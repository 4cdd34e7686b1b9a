package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestRuntimeState: url_state, host_state and the cookie pool survive a
// round trip exactly, and a missing row is a zero value with ErrNotFound.
func TestRuntimeState(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		at := f.now.Add(123456 * time.Microsecond)

		if st, err := s.GetURLState(ctx, store.URLHash("https://x.gov.test/")); !errors.Is(err, store.ErrNotFound) || st.ETag != "" {
			t.Fatalf("missing url state: %+v %v", st, err)
		}
		next := at.Add(36 * time.Hour)
		us := model.URLState{URL: "https://www.gd.gov.test/zcwj/1.html", ETag: `"abc"`, LastModified: "Mon, 02 Mar 2026 08:00:00 GMT",
			ContentHash: store.URLHash("body"), Simhash: 0xF00DFACE12345678, LastCheckedAt: &at, LastChangedAt: &at,
			ChangeIntervals: []int64{86400, 172800}, NextCheckAt: &next}
		if err := s.PutURLState(ctx, &us); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetURLState(ctx, us.URLHash)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, us) {
			t.Fatalf("url state round trip:\n got %+v\nwant %+v", got, us)
		}
		us.ETag = `"def"`
		if err := s.PutURLState(ctx, &us); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetURLState(ctx, us.URLHash); got.ETag != `"def"` {
			t.Fatalf("url state not replaced: %q", got.ETag)
		}

		if hs, err := s.GetHostState(ctx, "www.gd.gov.test"); !errors.Is(err, store.ErrNotFound) || hs.ConsecutiveErrors != 0 {
			t.Fatalf("missing host state: %+v %v", hs, err)
		}
		hs := model.HostState{Host: "www.gd.gov.test", ConsecutiveErrors: 3, BackoffUntil: &next, BreakerUntil: &next,
			BreakerTrips: []time.Time{at, next}, NeedsReview: true}
		if err := s.PutHostState(ctx, &hs); err != nil {
			t.Fatal(err)
		}
		gotHS, err := s.GetHostState(ctx, hs.Host)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotHS, hs) {
			t.Fatalf("host state round trip:\n got %+v\nwant %+v", gotHS, hs)
		}

		later := at.Add(time.Hour)
		cookies := []model.Cookie{
			{SiteID: &f.cmsSite, Host: "www.gdqy.gov.test", Name: "ctct", Value: "v1", Source: "browser", ExpiresAt: &later},
			{Host: "www.gdqy.gov.test", Name: "session", Value: "s", Source: "direct"},
			{Host: "www.gdqy.gov.test", Name: "old", Value: "o", Source: "direct", ExpiresAt: &at},
			{Host: "other.gov.test", Name: "x", Value: "y", Source: "direct"},
		}
		if err := s.PutCookies(ctx, cookies); err != nil {
			t.Fatal(err)
		}
		if err := s.PutCookies(ctx, []model.Cookie{{Host: "www.gdqy.gov.test", Name: "ctct", Value: "v2", Source: "browser", ExpiresAt: &later}}); err != nil {
			t.Fatal(err)
		}
		valid, err := s.ValidCookies(ctx, "www.gdqy.gov.test", at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(valid) != 2 || valid[0].Name != "ctct" || valid[0].Value != "v2" || valid[1].Name != "session" {
			t.Fatalf("valid cookies: %+v, want ctct=v2 and session (old expired, other host excluded)", valid)
		}
		if err := s.DeleteCookies(ctx, "www.gdqy.gov.test"); err != nil {
			t.Fatal(err)
		}
		if valid, _ := s.ValidCookies(ctx, "www.gdqy.gov.test", at); len(valid) != 0 {
			t.Fatalf("%d cookies after delete", len(valid))
		}
		if valid, _ := s.ValidCookies(ctx, "other.gov.test", at); len(valid) != 1 {
			t.Fatalf("delete touched another host")
		}

		for _, l := range []model.CrawlLog{
			{SiteID: &f.cmsSite, TargetID: &f.cmsTgt, Host: "www.gdqy.gov.test", ArticleURL: "https://www.gdqy.gov.test/robots.txt",
				Purpose: model.PurposeRobots, Strategy: model.StrategyDirect, HTTPStatus: ptr(200), Bytes: 40, DurationMS: ptr(12), Success: true, OccurredAt: at},
			{Host: "www.gdqy.gov.test", Purpose: model.PurposeList, HTTPStatus: ptr(412), Success: false, ErrorClass: "challenge", OccurredAt: next},
		} {
			if err := s.InsertCrawlLog(ctx, &l); err != nil {
				t.Fatal(err)
			}
		}
		logs, err := s.ListCrawlLogs(ctx, store.CrawlLogFilter{Host: "www.gdqy.gov.test"})
		if err != nil || len(logs) != 2 || logs[0].ErrorClass != "challenge" || logs[1].Method != "GET" || *logs[1].HTTPStatus != 200 {
			t.Fatalf("crawl logs: %+v %v", logs, err)
		}
	})
}

// TestColumnRegistry: upsert by (adapter, site, column), tag search through
// the dialect's index, and deactivation that keeps rows.
func TestColumnRegistry(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		cols := []model.ColumnRegistry{
			{AdapterID: "gkmlpt", SiteID: f.cmsSite, ColumnID: "2849", ColumnName: "规划计划 ", AdminLevel: "city", TopicTags: []string{"规划计划"}, PostCount: 12},
			{AdapterID: "gkmlpt", SiteID: f.cmsSite, ColumnID: "2850", ColumnName: "统计公报", AdminLevel: "county", TopicTags: []string{"统计", "公报"}},
			{AdapterID: "gkmlpt", SiteID: f.cmsSite, ColumnID: "2851", ColumnName: "发展规划", AdminLevel: "county", TopicTags: []string{"规划计划"}},
		}
		for i := range cols {
			if err := s.UpsertColumnRegistry(ctx, &cols[i]); err != nil {
				t.Fatal(err)
			}
		}
		// A re-listing changes tags and subscribes a target; ids stay.
		again := cols[1]
		again.TopicTags = []string{"统计"}
		again.SubscribedTargetID = &f.cmsTgt
		if err := s.UpsertColumnRegistry(ctx, &again); err != nil {
			t.Fatal(err)
		}
		if again.ID != cols[1].ID {
			t.Fatalf("re-listing created row %d, want %d", again.ID, cols[1].ID)
		}
		tests := []struct {
			name   string
			filter store.ColumnFilter
			want   []string
		}{
			{"by tag", store.ColumnFilter{Tag: "规划计划"}, []string{"2849", "2851"}},
			{"by replaced tag", store.ColumnFilter{Tag: "公报"}, nil},
			{"by kept tag", store.ColumnFilter{Tag: "统计"}, []string{"2850"}},
			{"unsubscribed county", store.ColumnFilter{AdminLevel: "county", UnsubscribedOnly: true}, []string{"2851"}},
		}
		for _, tt := range tests {
			got, err := s.ListColumns(ctx, tt.filter)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ColumnID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, ids, tt.want)
			}
		}
		all, _ := s.ListColumns(ctx, store.ColumnFilter{Tag: "规划计划"})
		if len(all) > 0 && all[0].ColumnName != "规划计划" {
			t.Errorf("column name stored as %q, want trailing space trimmed", all[0].ColumnName)
		}
		n, err := s.DeactivateColumnsExcept(ctx, "gkmlpt", f.cmsSite, []string{"2849"})
		if err != nil || n != 2 {
			t.Fatalf("deactivated %d, %v; want 2", n, err)
		}
		active, _ := s.ListColumns(ctx, store.ColumnFilter{ActiveOnly: true})
		everything, _ := s.ListColumns(ctx, store.ColumnFilter{})
		if len(active) != 1 || len(everything) != 3 {
			t.Fatalf("active %d of %d, want 1 of 3", len(active), len(everything))
		}
	})
}
