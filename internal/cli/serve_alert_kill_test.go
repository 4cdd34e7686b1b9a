package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestServeAlertKilledAfterDelivery: `zhizhi serve` is killed with SIGKILL
// the moment its webhook has received an alert, before it can record that
// it did. The serve started next takes the delivery back and sends it
// again — a Feishu or WeCom group cannot tell a repeat from a new alert, so
// the repeat must say it is one. The group hears of the alert, and never
// twice without being told. On SQLite the next serve takes the job back
// as it starts; on PostgreSQL River's rescuer does, after the job budget
// (20 s here) and its grace.
func TestServeAlertKilledAfterDelivery(t *testing.T) {
	waitBound(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			testServeAlertKilledAfterDelivery(t, dialect)
		})
	}
}

func testServeAlertKilledAfterDelivery(t *testing.T, dialect string) {
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "zhizhi.db")
	var args []string
	if dialect == store.DialectPostgres {
		dbURL = storetest.PostgresURL(t)
		args = []string{"--job-budget", "20s"}
	}
	st, err := store.Open(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := queue.Migrate(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	const host = "www.killed-after-delivery.gov.test"
	now := time.Now().UTC()
	until := now.Add(23 * time.Hour)
	if err := st.PutHostHealth(context.Background(), &model.HostState{Host: host, ConsecutiveErrors: 5, BreakerUntil: &until, NeedsReview: true,
		BreakerTrips: []time.Time{now.Add(-6 * 24 * time.Hour), now.Add(-3 * 24 * time.Hour), now.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		got      []alert.Notification
		received = make(chan struct{}, 16)
		release  = make(chan struct{})
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n alert.Notification
		if err := json.Unmarshal(body, &n); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, n)
		first := len(got) == 1
		mu.Unlock()
		received <- struct{}{}
		if first {
			<-release // the sender is killed before it hears the answer
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	cfg := reloadConfigDir(t)
	yaml := "webhooks:\n  - {name: ops, kind: json, url: " + hook.URL + "/ops}\n"
	if err := os.WriteFile(filepath.Join(cfg, config.AlertsFile), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := []string{"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_CONFIG_DIR=" + cfg, "ZHIZHI_DATA_DIR=" + dir,
		"TMPDIR=" + tmp, "ZHIZHI_LOG_LEVEL=info", "ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium")}

	first := spawnServe(t, env, args...)
	select {
	case <-received:
	case err := <-first.done:
		t.Fatalf("serve exited before it sent the alert: %v\n%s", err, first.output())
	case <-time.After(3 * time.Minute): // a safety net, not a measure
		first.kill()
		t.Fatalf("no alert reached the webhook:\n%s", first.output())
	}
	first.kill()
	close(release)

	second := spawnServe(t, env, args...)
	defer func() {
		if code := second.stop(t); code != 0 {
			t.Errorf("serve exited %d after SIGTERM:\n%s", code, second.output())
		}
	}()
	select {
	case <-received:
	case <-time.After(3 * time.Minute): // a safety net, not a measure
		t.Fatalf("the alert whose delivery the kill cut short was not sent again (a message lost):\n%s", second.output())
	}
	// Let a third copy come if one would.
	time.Sleep(3 * time.Second)

	mu.Lock()
	defer mu.Unlock()
	key := "review:" + host
	var plain, marked int
	for _, n := range got {
		if n.Key != key {
			continue
		}
		if strings.HasSuffix(n.Title, "（重发：上次发送可能已送达）") {
			marked++
		} else {
			plain++
		}
	}
	if plain != 1 {
		t.Errorf("the group got %d unmarked copies of the alert, want exactly 1 (a repeat must say it is one): %+v", plain, got)
	}
	if marked > 1 {
		t.Errorf("the group got %d copies marked as re-deliveries, want at most 1: %+v", marked, got)
	}
	if plain+marked != 2 {
		t.Errorf("the group got %d copies, want the first and one marked re-delivery: %+v", plain+marked, got)
	}
}
