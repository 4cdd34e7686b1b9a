package store_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestAdapterChecks: a run's results replace the adapter's earlier ones
// per site, each run is audited, a result with an unknown outcome refuses
// the whole run, and a long problem is kept cut to its column.
func TestAdapterChecks(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var ids []int64
		for _, code := range []string{"county_a", "county_b"} {
			site := &model.Site{SiteCode: code, SiteName: code, BaseURL: "https://" + code + ".gov.test",
				SiteRole: model.RoleCountyLocal, CMSAdapter: "gkmlpt", AdapterParams: []byte(`{}`),
				Access: model.AccessFull, DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
			if err := s.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertSite(ctx, site); return err }); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, site.ID)
		}
		long := strings.Repeat("读", 2500)
		if err := s.RecordAdapterChecks(ctx, "gkmlpt", "user:li", []store.AdapterCheck{
			{SiteID: ids[0], Outcome: store.CheckMatched, DetectedAs: "gkmlpt", Evidence: "url /gkmlpt/index"},
			{SiteID: ids[1], Outcome: store.CheckError, Problem: long},
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordAdapterChecks(ctx, "gkmlpt", "user:wang", []store.AdapterCheck{
			{SiteID: ids[0], Outcome: store.CheckOther, DetectedAs: "trs"},
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.AdapterChecks(ctx, "gkmlpt")
		if err != nil || len(got) != 2 {
			t.Fatalf("checks %+v %v, want one per site", got, err)
		}
		if a := got[0]; a.SiteCode != "county_a" || a.Outcome != store.CheckOther || a.DetectedAs != "trs" ||
			a.CheckedBy != "user:wang" || a.Evidence != "" || a.Passed() {
			t.Errorf("county_a after the second run: %+v, want the second run's result", a)
		}
		if b := got[1]; b.SiteCode != "county_b" || b.Outcome != store.CheckError || b.CheckedBy != "user:li" ||
			utf8.RuneCountInString(b.Problem) != 2000 || !strings.HasPrefix(long, b.Problem) {
			t.Errorf("county_b: outcome %s by %s, problem of %d characters; want the first run's error cut to 2000",
				b.Outcome, b.CheckedBy, utf8.RuneCountInString(b.Problem))
		}

		if err := s.RecordAdapterChecks(ctx, "gkmlpt", "user:li", []store.AdapterCheck{
			{SiteID: ids[1], Outcome: store.CheckMatched},
			{SiteID: ids[0], Outcome: "maybe"},
		}); err == nil {
			t.Fatal("a run with an unknown outcome was kept")
		}
		if again, _ := s.AdapterChecks(ctx, ""); len(again) != 2 || again[1].Outcome != store.CheckError {
			t.Errorf("a refused run changed the results: %+v", again)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{ObjectType: "adapter", ObjectID: "gkmlpt"})
		if err != nil || len(entries) != 2 {
			t.Errorf("audit: %d entries %v, want one per kept run", len(entries), err)
		}
	})
}
