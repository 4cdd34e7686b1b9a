package alert_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestTakedownDeadlineAlert: a site's takedown request that is still open
// 12 hours before its 48-hour deadline raises one alert, which clears when
// the request is carried out.
func TestTakedownDeadlineAlert(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rcv := newReceiver(t)
		cfg := &config.Alerts{Webhooks: alertsConfig(rcv.srv.URL).Webhooks, Takedown: true}
		a, err := alert.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
		k := openTakedown(t, st, t0)
		hooks := len(cfg.Webhooks)
		// 35 h 59 min after receipt: more than 12 h left, no alert.
		if ns := evaluate(t, a, t0.Add(35*time.Hour+59*time.Minute)); len(ns) != 0 {
			t.Fatalf("with 12 h 1 min left: %v", summary(t, ns, hooks))
		}
		// 36 h after receipt: 12 h left, one alert naming the site.
		fired := evaluate(t, a, t0.Add(36*time.Hour))
		key := fmt.Sprintf("takedown:%d", k.ID)
		if got := summary(t, fired, hooks); !reflect.DeepEqual(got, []string{key + " firing 1"}) {
			t.Fatalf("with 12 h left: %v", got)
		}
		wantText(t, fired[0], "下架请求临近期限：广东省人民政府", "尚未执行", "处理期限")
		if ns := evaluate(t, a, t0.Add(49*time.Hour)); len(ns) != 0 {
			t.Fatalf("past the deadline, still firing: %d more notifications", len(ns))
		}
		if _, err := st.FreezeTakedown(ctx, k.ID, "user:alice"); err != nil {
			t.Fatal(err)
		}
		resolved := evaluate(t, a, t0.Add(50*time.Hour))
		if got := summary(t, resolved, hooks); !reflect.DeepEqual(got, []string{key + " resolved 1"}) {
			t.Fatalf("after the takedown was carried out: %v", got)
		}
		wantText(t, resolved[0], "下架请求已执行")
	})
}

// openTakedown records, at t0, the provincial portal's request to take all
// its cards down, not yet carried out.
func openTakedown(t *testing.T, st *store.Store, t0 time.Time) *model.Takedown {
	t.Helper()
	ctx := context.Background()
	site := &model.Site{SiteCode: "gd_ref", SiteName: "广东省人民政府", BaseURL: "https://www.gd.gov.test",
		SiteRole: model.RoleProvinceRef, YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessSummary, Enabled: true}
	if err := st.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertSite(ctx, site); return err }); err != nil {
		t.Fatal(err)
	}
	k := &model.Takedown{SiteID: site.ID, Scope: model.TakedownSite, Requester: "广东省政务服务和数据管理局",
		RecordedBy: "user:alice", ReceivedAt: t0}
	if err := st.RecordTakedown(ctx, k); err != nil {
		t.Fatal(err)
	}
	return k
}
