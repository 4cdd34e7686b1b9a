package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// authCLI runs zhizhi commands on one SQLite file, stdin given.
type authCLI struct {
	dir, dsn string
}

func newAuthCLI(t *testing.T) *authCLI {
	dir := t.TempDir()
	c := &authCLI{dir: dir, dsn: "sqlite://" + filepath.Join(dir, "z.db")}
	// user and apikey read an existing database; migrate sets it up.
	if out, err := c.run("", "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	return c
}

func (c *authCLI) run(stdin string, args ...string) (string, error) {
	settings = Settings{}
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"--data-dir", c.dir, "--database-url", c.dsn}, args...))
	err := root.Execute()
	return out.String(), err
}

func (c *authCLI) store(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), c.dsn, c.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func cliExit(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return 1
	}
	return 0
}

// TestUserCommands: users are added with a password from standard input
// (never a flag), listed in Chinese, given a new password, role, disabled
// and enabled; every change is in the audit trail as the person at the
// terminal; bad input is one message and exit 2, changing nothing.
func TestUserCommands(t *testing.T) {
	c := newAuthCLI(t)
	if out, err := c.run("correct horse battery\n", "user", "add", "alice", "--role", "operator", "--password-stdin"); err != nil {
		t.Fatalf("user add: %v\n%s", err, out)
	}
	if out, err := c.run("", "user", "add", "bob"); cliExit(err) != 2 || !strings.Contains(err.Error(), "--password-stdin") {
		t.Errorf("user add without a terminal: exit %d, %v\n%s", cliExit(err), err, out)
	}
	for name, args := range map[string][]string{
		"bad role":       {"user", "add", "carol", "--role", "root", "--password-stdin"},
		"bad name":       {"user", "add", "Carol Smith", "--password-stdin"},
		"taken name":     {"user", "add", "alice", "--password-stdin"},
		"short password": {"user", "add", "dave", "--password-stdin"},
		"empty password": {"user", "add", "erin", "--password-stdin"},
		"unknown user":   {"user", "role", "nobody", "admin"},
		"unknown role":   {"user", "role", "alice", "superuser"},
		"no such user":   {"user", "disable", "nobody"},
		"password flag":  {"user", "add", "frank", "--password", "x"},
	} {
		stdin := "long enough password\n"
		if name == "short password" {
			stdin = "short\n"
		}
		if name == "empty password" {
			stdin = ""
		}
		_, err := c.run(stdin, args...)
		if cliExit(err) != 2 || err.Error() == "" || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: exit %d, %v, want one message and exit 2", name, cliExit(err), err)
		}
	}
	out, err := c.run("", "user", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"用户名 USERNAME", "角色 ROLE", "alice", "操作员 operator", "🟢 启用", "共 1 个用户"} {
		if !strings.Contains(out, want) {
			t.Errorf("user list lacks %q:\n%s", want, out)
		}
	}

	if out, err := c.run("a new long passphrase\n", "user", "passwd", "alice", "--password-stdin"); err != nil {
		t.Fatalf("user passwd: %v\n%s", err, out)
	}
	if _, err := c.run("", "user", "role", "alice", "admin"); err != nil {
		t.Fatal(err)
	}
	st := c.store(t)
	u, err := st.UserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := argon2id.ComparePasswordAndHash("a new long passphrase", u.PasswordHash); !ok || u.Role != "admin" {
		t.Errorf("after passwd and role: role %s, new password matches %v", u.Role, ok)
	}
	if _, err := c.run("", "user", "disable", "alice"); err != nil {
		t.Fatal(err)
	}
	out, _ = c.run("", "user", "list")
	if !strings.Contains(out, "已停用") || !strings.Contains(out, "管理员 admin") {
		t.Errorf("user list after disable and role:\n%s", out)
	}
	if _, err := c.run("", "user", "enable", "alice"); err != nil {
		t.Fatal(err)
	}

	entries, err := st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "user"})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append([]string{e.Action}, actions...)
		if !strings.HasPrefix(e.Actor, "cli:") || e.Actor == "cli:" {
			t.Errorf("%s recorded as done by %q, want cli: and the OS user", e.Action, e.Actor)
		}
	}
	if got := strings.Join(actions, " "); got != "user.add user.passwd user.role user.disable user.enable" {
		t.Errorf("audit trail %q", got)
	}
}

// TestAPIKeyCommands: a key is printed once with a warning in Chinese,
// works as a Bearer key for its user with its scopes until it expires or
// is revoked; the list shows its prefix, never the key; bad input is exit 2.
func TestAPIKeyCommands(t *testing.T) {
	c := newAuthCLI(t)
	if out, err := c.run("correct horse battery\n", "user", "add", "alice", "--role", "operator", "--password-stdin"); err != nil {
		t.Fatalf("user add: %v\n%s", err, out)
	}
	before := time.Now()
	out, err := c.run("", "apikey", "create", "--user", "alice", "--name", "知识库导出", "--scope", "read,export", "--expires", "90d")
	after := time.Now()
	if err != nil {
		t.Fatalf("apikey create: %v\n%s", err, out)
	}
	key := regexp.MustCompile(`zk_[A-Za-z0-9_-]{43}`).FindString(out)
	if key == "" || strings.Count(out, key) != 1 {
		t.Fatalf("apikey create printed no key, or more than once:\n%s", out)
	}
	if !strings.Contains(out, "只显示这一次") {
		t.Errorf("no warning that the key is shown once:\n%s", out)
	}

	st := c.store(t)
	svc := auth.New(st, auth.Options{})
	bearer := func(k string) (*auth.Principal, error) {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/export", nil)
		r.Header.Set("Authorization", "Bearer "+k)
		return svc.Authenticate(r)
	}
	p, err := bearer(key)
	if err != nil || p.Username != "alice" || !p.Allows(auth.ScopeExport) || p.Allows(auth.ScopeWrite) {
		t.Fatalf("the printed key: %+v %v", p, err)
	}
	keys, err := st.ListAPIKeys(context.Background(), 0)
	if err != nil || len(keys) != 1 || keys[0].ExpiresAt == nil {
		t.Fatalf("keys %+v %v", keys, err)
	}
	if exp := *keys[0].ExpiresAt; exp.Before(before.Add(90*24*time.Hour).Add(-time.Second)) || exp.After(after.Add(90*24*time.Hour)) {
		t.Errorf("--expires 90d: expires %v, want 90 days after %v", exp, before)
	}

	out, err = c.run("", "apikey", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"前缀 PREFIX", "知识库导出", "read,export", key[:9] + "…", "🟢 有效"} {
		if !strings.Contains(out, want) {
			t.Errorf("apikey list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key[9:]) {
		t.Errorf("apikey list shows the key:\n%s", out)
	}

	for name, args := range map[string][]string{
		"unknown scope":   {"apikey", "create", "--user", "alice", "--name", "x", "--scope", "read,delete"},
		"bad expiry":      {"apikey", "create", "--user", "alice", "--name", "x", "--scope", "read", "--expires", "90x"},
		"no user":         {"apikey", "create", "--name", "x", "--scope", "read"},
		"unknown user":    {"apikey", "create", "--user", "nobody", "--name", "x", "--scope", "read"},
		"key as a word":   {"apikey", "revoke", "zk_abc"},
		"unknown key":     {"apikey", "revoke", "999"},
		"list of nobody":  {"apikey", "list", "--user", "nobody"},
		"viewer's writer": {"apikey", "create", "--user", "bob", "--name", "x", "--scope", "write"},
	} {
		if name == "viewer's writer" {
			if _, err := c.run("bob's long password", "user", "add", "bob", "--password-stdin"); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.run("", args...)
		if cliExit(err) != 2 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: exit %d, %v, want one message and exit 2", name, cliExit(err), err)
		}
	}
	if n, _ := st.ListAPIKeys(context.Background(), 0); len(n) != 1 {
		t.Errorf("refused creates left %d keys, want 1", len(n))
	}

	if _, err := c.run("", "apikey", "revoke", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := bearer(key); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("revoked key: %v", err)
	}
	out, _ = c.run("", "apikey", "list")
	if !strings.Contains(out, "已吊销") {
		t.Errorf("apikey list after revoke:\n%s", out)
	}
	entries, _ := st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "apikey"})
	if len(entries) != 2 || entries[0].Action != "apikey.revoke" || entries[1].Action != "apikey.create" ||
		!strings.HasPrefix(entries[0].Actor, "cli:") {
		t.Errorf("audit of keys: %+v", entries)
	}
}
