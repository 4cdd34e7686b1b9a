package cli

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

func TestHostListAndClear(t *testing.T) {
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "z.db")
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, dir)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(24 * time.Hour)
	blocked := &model.HostState{Host: "www.blocked.gov.test", NeedsReview: true, BreakerUntil: &until, BlockReason: "captcha"}
	if err := st.PutHostHealth(ctx, blocked); err != nil {
		t.Fatal(err)
	}
	if err := st.PutHostHealth(ctx, &model.HostState{Host: "www.fine.gov.test"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	run := func(args ...string) (string, error) {
		return runInProcess(append([]string{"--data-dir", dir, "--database-url", dsn}, args...)...)
	}
	out, err := run("host", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"www.blocked.gov.test", "已封禁 (captcha)", "需人工复核", "www.fine.gov.test", "🟢 正常"} {
		if !strings.Contains(out, want) {
			t.Errorf("host list lacks %q:\n%s", want, out)
		}
	}
	if _, err := run("host", "clear", "www.blocked.gov.test"); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(ctx, dsn, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.GetHostState(ctx, "www.blocked.gov.test")
	if err != nil {
		t.Fatal(err)
	}
	if h.BlockReason != "" || h.NeedsReview || h.BreakerUntil != nil {
		t.Errorf("after clear: %+v", h)
	}
	if _, err := run("host", "clear", "www.never.gov.test"); err == nil || !strings.Contains(err.Error(), "no recorded state") {
		t.Errorf("clearing an unknown host: %v", err)
	}
}

// TestHostListShowsRobotsUnreachable: a host whose robots.txt could not be
// fetched (here: nothing listens on its address) is listed as unreachable,
// with since when and the error, not as healthy; `host clear` forgets the
// failure so the next request asks for robots.txt again.
func TestHostListShowsRobotsUnreachable(t *testing.T) {
	const gone = "www.gone.gov.test"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the connection is refused
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "z.db")
	run := func(args ...string) (string, error) {
		return runInProcess(append([]string{"--data-dir", dir, "--database-url", dsn, "--resolve", gone + "=" + addr,
			"--config-dir", filepath.Join(dir, "none"), "--chromium", filepath.Join(dir, "no-chromium")}, args...)...)
	}
	if _, err := run("migrate"); err != nil {
		t.Fatal(err)
	}
	_, err = run("fetch", "http://"+gone+"/zwgk/")
	if err == nil || !strings.Contains(err.Error(), "connection refused — robots.txt unreachable, not crawling this host (fail-closed)") ||
		strings.Contains(err.Error(), "line") {
		t.Fatalf("fetch: %v, want refused: connection refused — robots.txt unreachable", err)
	}
	out, err := run("host", "list")
	if err != nil {
		t.Fatal(err)
	}
	row := lineWith(out, gone)
	for _, want := range []string{"robots.txt unreachable since ", "error connection refused"} {
		if !strings.Contains(row, want) {
			t.Errorf("host list row lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(row, "🟢") {
		t.Errorf("host list shows a host with an unreachable robots.txt as healthy:\n%s", out)
	}
	if _, err := run("host", "clear", gone); err != nil {
		t.Fatal(err)
	}
	out, err = run("host", "list")
	if err != nil {
		t.Fatal(err)
	}
	if row := lineWith(out, gone); strings.Contains(row, "unreachable") || !strings.Contains(row, "🟢") {
		t.Errorf("after host clear the row is %q, want healthy", row)
	}
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
