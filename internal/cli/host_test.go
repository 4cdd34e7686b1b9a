package cli

import (
	"bytes"
	"context"
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
		settings = Settings{}
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append([]string{"--data-dir", dir, "--database-url", dsn}, args...))
		err := root.Execute()
		return out.String(), err
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
