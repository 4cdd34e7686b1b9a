package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// steppingClock returns a clock that moves one second per call, so any
// write shows in updated_at.
func steppingClock(start time.Time) func() time.Time {
	t := start
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// TestSyncIsIdempotent: upserting the same config twice reports no change
// and leaves updated_at alone; a real change is written.
func TestSyncIsIdempotent(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		s.Now = steppingClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if _, _, err := s.ImportDepartments(ctx, []model.Department{{DeptID: 37, DeptName: "发改局"}}); err != nil {
			t.Fatal(err)
		}
		dept := int64(37)
		build := func() (*model.Site, *model.SiteDepartment, *model.Target) {
			return &model.Site{SiteCode: "qingcheng", SiteName: "清城区", BaseURL: "https://www.qingcheng.gov.test",
					SiteRole: model.RoleCountyLocal, CMSAdapter: "gkmlpt",
					AdapterParams: json.RawMessage(`{"sid": 763042, "dept_path": "qyqcfgw"}`),
					Access:        model.AccessFull, RespectRobots: true, Enabled: true},
				&model.SiteDepartment{DeptPath: "qyqcfgw", LocalDeptID: &dept, DeptBinding: model.BindingMapped, Enabled: true},
				&model.Target{TargetCode: "qc_2849", TargetName: "规章文件", EntryURL: "https://www.qingcheng.gov.test/qyqcfgw/gkmlpt/index",
					ColumnID: "2849", ParserOverride: json.RawMessage(`{"detail": {"body": "div#zoom"}}`),
					ChannelName: "规章文件", ScheduleCron: "17 2 * * *", Enabled: true, Source: model.SourceYAML}
		}
		sync := func() (changes []bool, st *model.Site, tg *model.Target) {
			site, sd, target := build()
			err := s.WithTx(ctx, func(tx *store.Tx) error {
				_, c1, err := tx.UpsertSite(ctx, site)
				if err != nil {
					return err
				}
				sd.SiteID = site.ID
				_, c2, err := tx.UpsertSiteDepartment(ctx, sd)
				if err != nil {
					return err
				}
				target.SiteID, target.SiteDepartmentID = site.ID, &sd.ID
				_, c3, err := tx.UpsertTarget(ctx, target)
				if err != nil {
					return err
				}
				changes = []bool{c1, c2, c3}
				return nil
			})
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			return changes, site, target
		}

		first, _, tg1 := sync()
		if first[0] != true || first[1] != true || first[2] != true {
			t.Fatalf("first sync changed = %v, want all true", first)
		}
		if tg1.DeptID == nil || *tg1.DeptID != 37 {
			t.Fatalf("mapped target dept_id = %v, want 37 from its site department", tg1.DeptID)
		}
		before, err := s.TargetByCode(ctx, "qc_2849")
		if err != nil {
			t.Fatal(err)
		}
		// Runtime state the crawler writes must survive a sync.
		crawled := time.Date(2026, 2, 1, 3, 0, 0, 0, time.UTC)
		if err := s.MarkTargetCrawled(ctx, before.ID, crawled, &crawled); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordProbe(ctx, *before.SiteDepartmentID, model.DetectOK, crawled, json.RawMessage(`[{"id":2849}]`)); err != nil {
			t.Fatal(err)
		}

		second, site2, _ := sync()
		if second[0] || second[1] || second[2] {
			t.Fatalf("second identical sync changed = %v, want all false", second)
		}
		after, err := s.TargetByCode(ctx, "qc_2849")
		if err != nil {
			t.Fatal(err)
		}
		if !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("updated_at moved from %v to %v on an unchanged sync", before.UpdatedAt, after.UpdatedAt)
		}
		if after.LastCrawledAt == nil || !after.LastCrawledAt.Equal(crawled) {
			t.Fatalf("last_crawled_at = %v after sync, want %v kept", after.LastCrawledAt, crawled)
		}
		sd, err := s.SiteDepartmentByID(ctx, *after.SiteDepartmentID)
		if err != nil {
			t.Fatal(err)
		}
		if sd.DetectStatus != model.DetectOK || sd.LastProbedAt == nil {
			t.Fatalf("sync overwrote probe state: detect_status=%q last_probed_at=%v", sd.DetectStatus, sd.LastProbedAt)
		}

		// A real change is written and moves updated_at.
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			site2.SiteName = "清远市清城区人民政府"
			_, changed, err := tx.UpsertSite(ctx, site2)
			if !changed {
				t.Errorf("changed site name not reported as a change")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SiteByCode(ctx, "qingcheng")
		if err != nil {
			t.Fatal(err)
		}
		if got.SiteName != "清远市清城区人民政府" || !got.UpdatedAt.After(got.CreatedAt) {
			t.Fatalf("site after change: name %q updated_at %v created_at %v", got.SiteName, got.UpdatedAt, got.CreatedAt)
		}
	})
}

// TestUpsertTargetRules covers seed 004 §5.3's derivations and refusals.
func TestUpsertTargetRules(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		pendingID := int64(0)
		err := s.WithTx(ctx, func(tx *store.Tx) error {
			sd := &model.SiteDepartment{SiteID: f.cmsSite, DeptPath: "qyjyj", Enabled: true}
			_, _, err := tx.UpsertSiteDepartment(ctx, sd)
			pendingID = sd.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name    string
			target  model.Target
			wantErr error // nil means accepted
		}{
			{"pending binding refused", model.Target{SiteID: f.cmsSite, SiteDepartmentID: &pendingID, TargetCode: "p1"}, store.ErrPendingBinding},
			{"adapter site target without site department refused", model.Target{SiteID: f.cmsSite, TargetCode: "p2"}, errAny},
			{"site department of another site refused", model.Target{SiteID: f.yamlSite, SiteDepartmentID: &f.siteDept, TargetCode: "p3"}, errAny},
			{"template site target without department accepted", model.Target{SiteID: f.yamlSite, TargetCode: "p4"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tg := tt.target
				err := s.WithTx(ctx, func(tx *store.Tx) error {
					_, _, err := tx.UpsertTarget(ctx, &tg)
					return err
				})
				switch {
				case tt.wantErr == nil && err != nil:
					t.Fatalf("refused: %v", err)
				case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr != nil {
					if _, err := s.TargetByCode(ctx, tg.TargetCode); !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("refused target was stored (lookup err %v)", err)
					}
				}
			})
		}
	})
}

var errAny = errors.New("any error")

// TestDisableYAMLTargetsExcept: targets gone from YAML are disabled, not
// deleted; admin targets are left alone.
func TestDisableYAMLTargetsExcept(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		err := s.WithTx(ctx, func(tx *store.Tx) error {
			for _, tg := range []*model.Target{
				{SiteID: f.yamlSite, TargetCode: "y_keep", Enabled: true, Source: model.SourceYAML},
				{SiteID: f.yamlSite, TargetCode: "a_admin", Enabled: true, Source: model.SourceAdmin},
			} {
				if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
					return err
				}
			}
			n, err := tx.DisableYAMLTargetsExcept(ctx, []string{"y_keep", "qyfgw_2849"})
			if n != 1 {
				t.Errorf("disabled %d targets, want 1 (gd_zcwj)", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.ListTargets(ctx, store.TargetFilter{})
		if err != nil {
			t.Fatal(err)
		}
		enabled := map[string]bool{}
		for _, tg := range all {
			enabled[tg.TargetCode] = tg.Enabled
		}
		want := map[string]bool{"gd_zcwj": false, "y_keep": true, "a_admin": true, "qyfgw_2849": true}
		for code, w := range want {
			got, ok := enabled[code]
			if !ok || got != w {
				t.Errorf("target %s: present=%v enabled=%v, want enabled=%v", code, ok, got, w)
			}
		}
		live, err := s.ListTargets(ctx, store.TargetFilter{EnabledOnly: true, SiteCode: "gd_ref"})
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 2 {
			t.Fatalf("enabled targets of gd_ref = %d, want 2", len(live))
		}
	})
}

// TestImportDepartments: one bad row and nothing is written; re-import
// updates names and keeps ids.
func TestImportDepartments(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		created, updated, err := s.ImportDepartments(ctx, []model.Department{
			{DeptID: 1, DeptName: "清远市人民政府", State: 1},
			{DeptID: 37, DeptName: "清远市发改局", ParentDeptID: ptr(int64(1)), State: 1},
		})
		if err != nil || created != 2 || updated != 0 {
			t.Fatalf("first import: created=%d updated=%d err=%v", created, updated, err)
		}
		// The second row breaks a column limit: the first row's rename must not land.
		long := make([]byte, 300)
		for i := range long {
			long[i] = 'x'
		}
		_, _, err = s.ImportDepartments(ctx, []model.Department{
			{DeptID: 37, DeptName: "清远市发展和改革局", State: 1},
			{DeptID: 38, DeptName: string(long), State: 1},
		})
		if err == nil {
			t.Fatal("import with a bad row succeeded")
		}
		depts, err := s.ListDepartments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(depts) != 2 || depts[1].DeptName != "清远市发改局" {
			t.Fatalf("after failed import: %+v, want the first snapshot untouched", depts)
		}
		created, updated, err = s.ImportDepartments(ctx, []model.Department{
			{DeptID: 1, DeptName: "清远市人民政府", State: 1},
			{DeptID: 37, DeptName: "清远市发展和改革局", ParentDeptID: ptr(int64(1)), State: 1},
		})
		if err != nil || created != 0 || updated != 1 {
			t.Fatalf("re-import: created=%d updated=%d err=%v, want 0/1", created, updated, err)
		}
		depts, _ = s.ListDepartments(ctx)
		if depts[1].DeptID != 37 || depts[1].DeptName != "清远市发展和改革局" {
			t.Fatalf("re-import: %+v", depts[1])
		}
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			for id, want := range map[int64]bool{37: true, 38: false} {
				got, err := tx.DepartmentExists(ctx, id)
				if err != nil {
					return err
				}
				if got != want {
					t.Errorf("DepartmentExists(%d) = %v", id, got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
