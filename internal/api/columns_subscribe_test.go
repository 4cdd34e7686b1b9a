package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestColumnSubscribe: bulk subscription makes one target per column under
// its site department; a column whose department is still pending refuses
// the whole batch with 409 naming it, and nothing is written; an id not in
// the catalog is a 400 naming it; unsubscribing switches the target off and
// subscribing again switches it back on. Every change is recorded with the
// caller as the actor.
func TestColumnSubscribe(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		probed := time.Date(2026, 4, 22, 2, 0, 0, 0, time.UTC)
		if err := st.RecordProbe(ctx, w.sdMapped, model.DetectOK, probed, nil); err != nil {
			t.Fatal(err)
		}
		pending := &model.SiteDepartment{SiteID: w.cmsSite, DeptPath: "qyjyj", DeptBinding: model.BindingPending,
			DeptDisplayName: "清远市教育局", DetectStatus: model.DetectOK, Enabled: true}
		if err := st.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertSiteDepartment(ctx, pending); return err }); err != nil {
			t.Fatal(err)
		}
		price := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: w.cmsSite, SiteDepartmentID: &w.sdMapped, ColumnID: "2851",
			ColumnName: "价格监管", AdminLevel: "city", TopicTags: []string{"价格"}, PostCount: 4, LastSeenAt: probed}
		school := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: w.cmsSite, SiteDepartmentID: &pending.ID, ColumnID: "4001",
			ColumnName: "教育动态", AdminLevel: "city", TopicTags: []string{"教育"}, PostCount: 9, LastSeenAt: probed}
		for _, c := range []*model.ColumnRegistry{price, school} {
			if err := st.UpsertColumnRegistry(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		const code = "qy_qyfgw_2851"
		sub := func(body string) request { return postJSON("/api/v1/columns/subscribe", tokOperator, body) }
		type answer struct {
			Items []subscriptionView `json:"items"`
		}

		// The pending department refuses the batch, naming its column.
		var ref refusalAnswer
		a.expect(sub(fmt.Sprintf(`{"ids": [%d, %d]}`, price.ID, school.ID)), 409).decode(t, &ref)
		if ref.Error != "conflict" || len(ref.Fields) != 1 || ref.Fields[0].Field != "ids" ||
			!strings.Contains(ref.Fields[0].Message, "教育动态") || !strings.Contains(ref.Fields[0].Message, "pending") {
			t.Errorf("batch with a pending department: %+v, want 409 naming 教育动态 and why", ref)
		}
		if _, err := st.TargetByCode(ctx, code); err == nil {
			t.Fatalf("a refused batch created %s", code)
		}
		// An id not in the catalog: 400 naming it.
		a.expect(sub(fmt.Sprintf(`{"ids": [%d, 99999]}`, price.ID)), 400).decode(t, &ref)
		if len(ref.Fields) != 1 || ref.Fields[0].Field != "ids" || !strings.Contains(ref.Fields[0].Message, "99999") {
			t.Errorf("unknown id: %+v, want it named", ref)
		}
		// A bad default: 400 naming it under defaults.
		a.expect(sub(fmt.Sprintf(`{"ids": [%d], "defaults": {"schedule": "*/5 * * * *"}}`, price.ID)), 400).decode(t, &ref)
		if len(ref.Fields) != 1 || ref.Fields[0].Field != "defaults.schedule" {
			t.Errorf("bad schedule: %+v, want defaults.schedule named", ref)
		}
		if n := len(audits(t, st, "target")); n != 0 {
			t.Fatalf("%d audit entries after refused batches", n)
		}

		var got answer
		a.expect(sub(fmt.Sprintf(`{"ids": [%d, %d], "defaults": {"schedule": "weekly", "expected_cadence_days": 14, "content_category": "价格信息"}}`,
			price.ID, w.colSubscribed)), 200).decode(t, &got)
		if len(got.Items) != 2 || got.Items[0].Status != "created" || got.Items[1].Status != "already" {
			t.Fatalf("subscribe: %+v, want created then already", got.Items)
		}
		tg, err := st.TargetByCode(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if got.Items[0].TargetID == nil || *got.Items[0].TargetID != tg.ID || tg.ExpectedCadenceDays != 14 ||
			tg.ContentCategory != "价格信息" || tg.DeptID == nil || *tg.DeptID != 37 || !tg.Enabled || tg.CreatedBy != "user:li" {
			t.Errorf("subscribed target %+v (answer %+v)", tg, got.Items[0])
		}
		if es := targetAudits(t, st, code); len(es) != 1 || es[0].Action != "target.subscribe" || es[0].Actor != "user:li" {
			t.Errorf("audit %+v, want one target.subscribe by user:li", es)
		}

		// Unsubscribe switches it off (a column never subscribed is
		// reported, not refused); subscribing again switches it back on.
		a.expect(postJSON("/api/v1/columns/unsubscribe", tokKeyWrite, fmt.Sprintf(`{"ids": [%d, %d]}`, price.ID, w.colFree)), 200).decode(t, &got)
		byColumn := map[string]subscriptionView{}
		for _, it := range got.Items {
			byColumn[it.ColumnID] = it
		}
		if len(got.Items) != 2 || byColumn["2851"].Status != "disabled" || byColumn["2850"].Status != "not_subscribed" || byColumn["2850"].TargetID != nil {
			t.Errorf("unsubscribe: %+v", got.Items)
		}
		if tg, _ := st.TargetByCode(ctx, code); tg.Enabled {
			t.Errorf("unsubscribed target still enabled")
		}
		a.expect(sub(fmt.Sprintf(`{"ids": [%d]}`, price.ID)), 200).decode(t, &got)
		if len(got.Items) != 1 || got.Items[0].Status != "reenabled" {
			t.Errorf("subscribe again: %+v, want reenabled", got.Items)
		}
		es := targetAudits(t, st, code)
		if len(es) != 3 || es[1].Action != "target.unsubscribe" || es[1].Actor != "apikey:8(li)" {
			t.Errorf("audit %+v, want subscribe, unsubscribe by apikey:8(li), subscribe", es)
		}

		for _, bad := range []string{`{}`, `{"ids": []}`, `{"ids": [0]}`, `{"ids": ["a"]}`, `{"ids": [1], "extra": 1}`,
			`{"ids": [1], "defaults": {"cadence": 3}}`} {
			a.expect(sub(bad), 400)
		}
		a.expect(postJSON("/api/v1/columns/unsubscribe", tokOperator, `{"ids": [99999]}`), 400)
	})
}
