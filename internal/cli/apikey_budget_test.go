package cli

import (
	"context"
	"strings"
	"testing"

	"zhizhi/internal/budget"
	"zhizhi/internal/store"
)

// TestAPIKeyBudgetCommands: an acquire key is made with the budgets its
// flags give and the defaults for the rest, shown in Chinese; apikey
// budget shows them with today's use and changes only the limits named;
// bad input is one message and exit 2 and leaves no key or budget behind.
func TestAPIKeyBudgetCommands(t *testing.T) {
	c := newAuthCLI(t)
	for _, u := range [][]string{{"alice", "operator"}, {"bob", "viewer"}} {
		if out, err := c.run("a long enough passphrase\n", "user", "add", u[0], "--role", u[1], "--password-stdin"); err != nil {
			t.Fatalf("user add: %v\n%s", err, out)
		}
	}
	out, err := c.run("", "apikey", "create", "--user", "alice", "--name", "智能体", "--scopes", "acquire",
		"--requests-per-day", "500", "--bytes-per-day", "200MiB", "--browser-seconds-per-day", "0")
	if err != nil {
		t.Fatalf("apikey create: %v\n%s", err, out)
	}
	if !strings.Contains(out, "权限 acquire") || !strings.Contains(out, "请求 500 次，流量 200 MiB，浏览器 0 秒，OCR 200 页；每分钟最多 60 次请求") {
		t.Errorf("apikey create does not show the key's budget:\n%s", out)
	}
	if out, err := c.run("", "apikey", "create", "--user", "alice", "--name", "plain", "--scope", "read,acquire"); err != nil ||
		!strings.Contains(out, "流量 1 GiB") {
		t.Fatalf("apikey create with the defaults: %v\n%s", err, out)
	}
	if _, err := c.run("", "apikey", "create", "--user", "alice", "--name", "reader", "--scope", "read"); err != nil {
		t.Fatal(err)
	}
	st := c.store(t)
	ctx := context.Background()
	svc := budget.New(st, nil)
	limitsAre := func(id int64, want budget.Limits) {
		t.Helper()
		if got, err := svc.Limits(ctx, id); err != nil || got != want {
			t.Errorf("key %d limits %+v %v, want %+v", id, got, err, want)
		}
	}
	first := budget.Limits{PerDay: budget.Cost{Requests: 500, Bytes: 200 << 20, BrowserSeconds: 0, OCRPages: 200}, RequestsPerMinute: 60}
	limitsAre(1, first)
	limitsAre(2, budget.Defaults)
	if b, err := st.KeyBudget(ctx, 2); err != nil || b.PerDay.Requests != budget.Defaults.PerDay.Requests {
		t.Errorf("the defaults were not written for key 2: %+v %v", b, err)
	}

	out, err = c.run("", "apikey", "budget", "1", "--requests-per-minute", "10")
	if err != nil {
		t.Fatalf("apikey budget: %v\n%s", err, out)
	}
	first.RequestsPerMinute = 10
	limitsAre(1, first)
	for _, want := range []string{"每日上限 LIMIT", "200 MiB", "500", "每分钟最多 10 次请求"} {
		if !strings.Contains(out, want) {
			t.Errorf("apikey budget lacks %q:\n%s", want, out)
		}
	}

	for name, args := range map[string][]string{
		"budget without acquire": {"apikey", "create", "--user", "alice", "--name", "x", "--scope", "read", "--requests-per-day", "5"},
		"bad size":               {"apikey", "create", "--user", "alice", "--name", "x", "--scope", "acquire", "--bytes-per-day", "12XB"},
		"negative":               {"apikey", "create", "--user", "alice", "--name", "x", "--scope", "acquire", "--ocr-pages-per-day", "-1"},
		"viewer's acquire key":   {"apikey", "create", "--user", "bob", "--name", "x", "--scope", "acquire"},
		"unknown key":            {"apikey", "budget", "999"},
		"read key":               {"apikey", "budget", "3", "--requests-per-day", "9"},
		"negative change":        {"apikey", "budget", "1", "--requests-per-day", "-2"},
		"not an id":              {"apikey", "budget", "zk_abc"},
	} {
		_, err := c.run("", args...)
		if cliExit(err) != 2 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: exit %d, %v, want one message and exit 2", name, cliExit(err), err)
		}
	}
	if keys, _ := st.ListAPIKeys(ctx, 0); len(keys) != 3 {
		t.Errorf("refused creates left %d keys, want 3", len(keys))
	}
	limitsAre(1, first)
	if _, err := st.KeyBudget(ctx, 3); err == nil {
		t.Error("a read key got a budget")
	}
	entries, _ := st.ListAudit(ctx, store.AuditFilter{ObjectType: "apikey", ObjectID: "1"})
	if len(entries) != 3 || entries[0].Action != "apikey.budget" || entries[1].Action != "apikey.budget" || entries[2].Action != "apikey.create" {
		t.Errorf("audit of key 1: %+v, want create, its budget, the change", entries)
	}
}
