package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store/storetest"
)

// TestAlertsFollowTheConfiguration: serve's alert settings follow
// alerts.yaml as the configuration is read again (SIGHUP, `config sync`),
// without a restart: a file that appears is put in force, one whose
// webhook address is not set keeps the settings in force, and a file taken
// away turns alerting off.
func TestAlertsFollowTheConfiguration(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	dir := testConfigDir(t)
	b, problems := config.Load(dir)
	if config.HasErrors(problems) {
		t.Fatal(config.Errors(problems))
	}
	client := crawltest.FastClient(t, st, b, fetch.ResolveMap{}, false)
	alerter := &alert.Alerter{Store: st}
	live := liveConfig(st, b, 0, client, alerter, dir, config.Options{}, slog.Default())
	path := filepath.Join(dir, config.AlertsFile)
	reload := func(yaml string) {
		t.Helper()
		if yaml == "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := live.Reload(ctx); err != nil {
			t.Fatalf("reload: %v", err)
		}
	}

	reload("webhooks:\n  - {name: ops, kind: json, url: http://127.0.0.1:9/alerts}\n")
	if c := alerter.Config(); c == nil || len(c.Webhooks) != 1 || c.Webhooks[0].Name != "ops" {
		t.Fatalf("after alerts.yaml appeared: %+v, want its webhook in force", c)
	}
	reload("webhooks:\n  - {name: ops2, kind: feishu, url_env: ZHIZHI_TEST_UNSET_WEBHOOK_URL}\n")
	if c := alerter.Config(); c == nil || len(c.Webhooks) != 1 || c.Webhooks[0].Name != "ops" {
		t.Errorf("after a file whose webhook address is not set: %+v, want the previous settings kept", c)
	}
	reload("")
	if c := alerter.Config(); c != nil {
		t.Errorf("after alerts.yaml was removed: %+v, want alerting off", c)
	}
}
