package target_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// catalog puts columns of the qingcheng site into the registry the way a
// crawl of each department's index does, and returns their ids by column.
// qcjyj is a department nobody has bound yet, qcxx one whose CMS pages
// were never found; the others were probed.
func catalog(t *testing.T, st *store.Store) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	site, err := st.SiteByCode(ctx, "qingcheng")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		if _, _, err := tx.UpsertSiteDepartment(ctx, &model.SiteDepartment{SiteID: site.ID, DeptPath: "qcjyj",
			DeptBinding: model.BindingPending, DeptDisplayName: "清城区教育局", DetectStatus: model.DetectOK, Enabled: true}); err != nil {
			return err
		}
		_, _, err := tx.UpsertSiteDepartment(ctx, &model.SiteDepartment{SiteID: site.ID, DeptPath: "qcxx",
			DeptBinding: model.BindingCrossDept, DetectStatus: model.DetectPending, Enabled: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	depts, err := st.ListSiteDepartments(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	deptID := map[string]int64{}
	for _, d := range depts {
		deptID[d.DeptPath] = d.ID
		if d.DeptPath == "qcfgw" || d.DeptPath == "xxgk" {
			if err := st.RecordProbe(ctx, d.ID, model.DetectOK, time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	cols := []struct {
		dept, id, name string
		tags           []string
	}{
		{"qcfgw", "3001", "财政预算", []string{"财政"}},
		{"qcfgw", "3002", "价格监管", []string{"价格"}},
		{"qcfgw", "2849", "规章文件", []string{"法规"}}, // the files declare it already
		{"xxgk", "90002", "政府公报", []string{"公报", "法规"}},
		{"qcjyj", "4001", "教育动态", []string{"教育"}},
		{"qcxx", "5001", "司法动态", []string{"司法"}},
	}
	out := map[string]int64{}
	for _, c := range cols {
		id := deptID[c.dept]
		reg := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: site.ID, SiteDepartmentID: &id, ColumnID: c.id,
			ColumnName: c.name, AdminLevel: "county", TopicTags: c.tags, PostCount: 5,
			LastSeenAt: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)}
		if err := st.UpsertColumnRegistry(ctx, reg); err != nil {
			t.Fatal(err)
		}
		out[c.id] = reg.ID
	}
	return out
}

func statuses(subs []target.Subscription) map[string]string {
	out := map[string]string{}
	for _, s := range subs {
		out[s.ColumnID] = s.Status
	}
	return out
}

func columnIDs(t *testing.T, st *store.Store, f store.ColumnFilter) string {
	t.Helper()
	es, err := st.ListColumnEntries(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ColumnID)
	}
	return strings.Join(ids, " ")
}

// TestSubscribe: bulk subscription makes one target per column under its
// site department, with the department its binding gives; a pending
// department refuses the batch naming the column; already subscribed
// columns are skipped and reported; unsubscribing disables.
func TestSubscribe(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		setUp(t, st)
		reg := catalog(t, st)
		svc := &target.Service{Store: st}
		defaults := target.Defaults{Schedule: target.ScheduleWeekly, ExpectedCadenceDays: 14, ContentCategory: "财政信息"}

		subs, err := svc.Subscribe(ctx, []int64{reg["3001"], reg["90002"]}, defaults, "user:alice")
		if err != nil {
			t.Fatal(err)
		}
		if st := statuses(subs); st["3001"] != target.StatusCreated || st["90002"] != target.StatusCreated {
			t.Fatalf("subscribe = %+v, want both created", subs)
		}
		tests := []struct {
			code, binding string
			dept          *int64
			registry      int64
		}{
			{"qingcheng_qcfgw_3001", model.BindingMapped, ptr(int64(2101)), reg["3001"]},
			{"qingcheng_xxgk_90002", model.BindingCityLevel, nil, reg["90002"]},
		}
		for _, tt := range tests {
			tg := mustTarget(t, st, tt.code)
			if tg.DeptBinding != tt.binding || (tg.DeptID == nil) != (tt.dept == nil) || (tt.dept != nil && *tg.DeptID != *tt.dept) {
				t.Errorf("%s: binding %q dept %v, want %q %v", tt.code, tg.DeptBinding, tg.DeptID, tt.binding, tt.dept)
			}
			if tg.RegistryID == nil || *tg.RegistryID != tt.registry || tg.Source != model.SourceAdmin || !tg.Enabled {
				t.Errorf("%s: registry %v source %q enabled %v, want registry %d, admin, enabled", tt.code, tg.RegistryID, tg.Source, tg.Enabled, tt.registry)
			}
			if tg.ExpectedCadenceDays != 14 || tg.ContentCategory != "财政信息" || tg.SiteDepartmentID == nil {
				t.Errorf("%s: cadence %d category %q, want the defaults 14 and 财政信息", tt.code, tg.ExpectedCadenceDays, tg.ContentCategory)
			}
			// Weekly: one day of the week, at a night-window time.
			if f := strings.Fields(tg.ScheduleCron); len(f) != 5 || f[2] != "*" || f[4] == "*" || !strings.Contains("1234", f[1]) {
				t.Errorf("%s: schedule %q, want a weekly cron in the night window", tt.code, tg.ScheduleCron)
			}
			if es := audit(t, st, tt.code); len(es) != 1 || es[0].Action != "target.subscribe" || es[0].Actor != "user:alice" {
				t.Errorf("%s: audit:%s\nwant one target.subscribe by user:alice", tt.code, auditLines(es))
			}
		}

		// Again, with a column the files declare: both skipped and reported.
		subs, err = svc.Subscribe(ctx, []int64{reg["3001"], reg["2849"]}, defaults, "user:alice")
		if err != nil {
			t.Fatal(err)
		}
		if st := statuses(subs); st["3001"] != target.StatusAlready || st["2849"] != target.StatusAlready {
			t.Errorf("second subscribe = %+v, want both already subscribed", subs)
		}

		// A column under a pending department refuses the batch.
		_, err = svc.Subscribe(ctx, []int64{reg["3002"], reg["4001"]}, defaults, "user:alice")
		if !errors.Is(err, target.ErrInvalid) || !strings.Contains(err.Error(), "教育动态") || !strings.Contains(err.Error(), "pending") {
			t.Fatalf("subscribe with a pending department: %v, want a refusal naming 教育动态 and pending", err)
		}
		_, err = svc.Subscribe(ctx, []int64{reg["5001"]}, defaults, "user:alice")
		if !errors.Is(err, target.ErrInvalid) || !strings.Contains(err.Error(), "司法动态") || !strings.Contains(err.Error(), "探测") {
			t.Fatalf("subscribe under a department never probed: %v, want a refusal naming 司法动态 and the probe", err)
		}
		for _, code := range []string{"qingcheng_qcfgw_3002", "qingcheng_qcjyj_4001", "qingcheng_qcxx_5001"} {
			if _, err := st.TargetByCode(ctx, code); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("refused batch wrote %s: %v", code, err)
			}
		}

		if got := columnIDs(t, st, store.ColumnFilter{SubscribedOnly: true}); got != "2849 3001 90002" {
			t.Errorf("subscribed columns %q, want 2849 3001 90002", got)
		}
		subs, err = svc.Unsubscribe(ctx, []int64{reg["3001"], reg["3002"]}, "user:bob")
		if err != nil {
			t.Fatal(err)
		}
		if st := statuses(subs); st["3001"] != target.StatusDisabled || st["3002"] != target.StatusNotSubscribed {
			t.Errorf("unsubscribe = %+v, want 3001 disabled, 3002 not subscribed", subs)
		}
		if mustTarget(t, st, "qingcheng_qcfgw_3001").Enabled {
			t.Errorf("unsubscribed column's target still enabled")
		}
		if got := columnIDs(t, st, store.ColumnFilter{UnsubscribedOnly: true}); got != "3001 3002 4001 5001" {
			t.Errorf("unsubscribed columns %q, want 3001 3002 4001 5001", got)
		}
		subs, err = svc.Subscribe(ctx, []int64{reg["3001"]}, defaults, "user:carol")
		if err != nil || statuses(subs)["3001"] != target.StatusReenabled || !mustTarget(t, st, "qingcheng_qcfgw_3001").Enabled {
			t.Errorf("resubscribe: %v %+v, want the target enabled again", err, subs)
		}
		es := audit(t, st, "qingcheng_qcfgw_3001")
		var actions []string
		for _, e := range es {
			actions = append(actions, e.Action+" "+e.Actor)
		}
		if got := strings.Join(actions, ", "); got != "target.subscribe user:carol, target.unsubscribe user:bob, target.subscribe user:alice" {
			t.Errorf("audit of 3001: %s", got)
		}
	})
}

// TestColumnCatalogFilters: the catalog's search by site, adapter and
// subscription, and the tag cloud's counts.
func TestColumnCatalogFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		setUp(t, st)
		reg := catalog(t, st)
		svc := &target.Service{Store: st}
		if _, err := svc.Subscribe(ctx, []int64{reg["90002"]}, target.Defaults{}, "user:alice"); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			filter store.ColumnFilter
			want   string
		}{
			{"site name part", store.ColumnFilter{Site: "清城区"}, "2849 3001 3002 4001 5001 90002"},
			{"site code in capitals", store.ColumnFilter{Site: "QINGCHENG"}, "2849 3001 3002 4001 5001 90002"},
			{"no such site", store.ColumnFilter{Site: "清新"}, ""},
			{"a percent sign matches itself", store.ColumnFilter{Site: "%"}, ""},
			{"adapter", store.ColumnFilter{AdapterID: "gkmlpt"}, "2849 3001 3002 4001 5001 90002"},
			{"other adapter", store.ColumnFilter{AdapterID: "trs"}, ""},
			{"admin level", store.ColumnFilter{AdminLevel: "city"}, ""},
			{"tag", store.ColumnFilter{Tag: "法规"}, "2849 90002"},
			{"tag and unsubscribed", store.ColumnFilter{Tag: "法规", UnsubscribedOnly: true}, "2849"},
			{"subscribed", store.ColumnFilter{SubscribedOnly: true}, "90002"},
			{"page", store.ColumnFilter{Limit: 2, Offset: 1}, "3001 3002"},
		}
		for _, tt := range tests {
			if got := columnIDs(t, st, tt.filter); got != tt.want {
				t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			}
		}
		if n, err := st.CountColumns(ctx, store.ColumnFilter{Tag: "法规"}); err != nil || n != 2 {
			t.Errorf("count by tag: %d %v, want 2", n, err)
		}
		es, err := st.ListColumnEntries(ctx, store.ColumnFilter{SubscribedOnly: true})
		if err != nil || len(es) != 1 || es[0].TargetCode != "qingcheng_xxgk_90002" || !es[0].Subscribed() ||
			es[0].SiteCode != "qingcheng" || es[0].DeptPath != "xxgk" {
			t.Errorf("subscribed entry %+v %v, want qingcheng xxgk with its target", es, err)
		}

		counts, err := st.ColumnTagCounts(ctx, store.ColumnFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var cloud []string
		for _, c := range counts {
			cloud = append(cloud, c.Tag+":"+string(rune('0'+c.Count)))
		}
		if got := strings.Join(cloud, " "); got != "法规:2 价格:1 公报:1 司法:1 教育:1 财政:1" {
			t.Errorf("tag cloud %q, want 法规:2 first, then the rest by tag", got)
		}
		counts, err = st.ColumnTagCounts(ctx, store.ColumnFilter{SubscribedOnly: true})
		if err != nil || len(counts) != 2 {
			t.Errorf("tag cloud of subscribed columns %+v %v, want 公报 and 法规", counts, err)
		}
	})
}
