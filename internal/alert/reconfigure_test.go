package alert_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/store/storetest"
)

// TestReconfigure: an alerter started without alerts.yaml raises nothing;
// once a configuration is put in force, a condition that held all along
// is told once, to the webhooks now configured; a configuration that
// could not deliver is refused and the one in force stays; taking the
// file away stops deliveries, and a message for a webhook that is no
// longer configured is not retried.
func TestReconfigure(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	openTakedown(t, st, t0)
	overdue := t0.Add(40 * time.Hour) // 8 h before the 48 h deadline

	a := &alert.Alerter{Store: st}
	if ns := evaluate(t, a, overdue); len(ns) != 0 || a.Config() != nil {
		t.Fatalf("without a configuration: %d notifications, config %v", len(ns), a.Config())
	}

	cfg := &config.Alerts{Webhooks: alertsConfig(rcv.srv.URL).Webhooks[:2], Takedown: true}
	if err := a.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	fired := evaluate(t, a, overdue.Add(time.Minute))
	if got := summary(t, fired, 2); len(got) != 1 || len(fired) != 2 {
		t.Fatalf("after alerts.yaml appeared: %v (%d notifications), want the open takedown told to both webhooks", got, len(fired))
	}

	unset := &config.Alerts{File: "alerts.yaml", Takedown: true,
		Webhooks: []config.Webhook{{Name: "ops", Kind: config.WebhookFeishu, URLEnv: "ZHIZHI_TEST_UNSET_WEBHOOK"}}}
	if err := a.Reconfigure(unset); err == nil {
		t.Fatal("a configuration whose webhook address is not set was put in force")
	}
	if !reflect.DeepEqual(a.Config(), cfg) {
		t.Errorf("a refused configuration replaced the one in force: %+v", a.Config())
	}

	if err := a.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	err := a.Send(ctx, fired[0])
	if err == nil || alert.Retryable(err) {
		t.Errorf("send with alerting off: %v, want a refusal that is not retried", err)
	}
}
