package ui

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// consoleRoutes reads every pattern the console's source registers on a
// mux (Handle and HandleFunc calls whose pattern is a string made of
// literals and Prefix), so a route added later is in the list without
// anyone adding it here.
func consoleRoutes(t *testing.T) []string {
	t.Helper()
	var out []string
	inspectSources(t, func(fset *token.FileSet, n ast.Node) {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
			return
		}
		pattern, ok := stringValue(call.Args[0])
		if !ok {
			t.Errorf("%s: a route pattern this test cannot read; write it as literals and Prefix", fset.Position(call.Pos()))
			return
		}
		out = append(out, pattern)
	})
	return out
}

// inspectSources calls fn on every node of the console's Go sources (not
// its tests), for tests that read what the code registers or reads.
func inspectSources(t *testing.T, fn func(fset *token.FileSet, n ast.Node)) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn(fset, n)
			return true
		})
	}
}

func stringValue(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if e.Name == "Prefix" {
			return Prefix, true
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := stringValue(e.X)
			b, ok2 := stringValue(e.Y)
			return a + b, ok1 && ok2
		}
	}
	return "", false
}

// TestConsoleRefusesAPIKeys: the console is for people signed in. Every
// change it offers (each POST, PUT, PATCH or DELETE route under /admin/
// but signing in and out), sent with an operator's read-only API key,
// is refused with 401 before its handler runs: no audit entry, no target
// switched off. The same operator signed in with a session still gets in.
func TestConsoleRefusesAPIKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st)
		svc := auth.New(st, auth.Options{PasswordParams: &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}})
		if _, err := svc.CreateUser(ctx, "cli:test", "wang", "correct horse battery", auth.RoleOperator); err != nil {
			t.Fatal(err)
		}
		readKey, _, err := svc.CreateAPIKey(ctx, "cli:test", "wang", "只读", []string{auth.ScopeRead}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Options{Store: st, Sessions: svc, Jobs: w.q, ConfigDir: w.cfgDir,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now }})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

		audit := func() int {
			es, err := st.ListAudit(ctx, store.AuditFilter{Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		auditBefore := audit()
		values := map[string]string{"code": "lianzhou_tzgg", "host": hostHealthy, "id": "1"}
		wildcard := regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)
		form := url.Values{"enabled": {"0"}, "reason": {"只读密钥"}, "field": {"enabled"}, "id": {"1"}}.Encode()
		writes := 0
		for _, pattern := range consoleRoutes(t) {
			method, path, ok := strings.Cut(pattern, " ")
			if !ok || method == http.MethodGet || method == http.MethodHead || path == Prefix+"/login" || path == Prefix+"/logout" {
				// Signing in and out take no key: they act on the
				// request's own session cookie only.
				continue
			}
			writes++
			path = wildcard.ReplaceAllStringFunc(path, func(m string) string {
				v, ok := values[wildcard.FindStringSubmatch(m)[1]]
				if !ok {
					t.Fatalf("%s: no value for %s in this test", pattern, m)
				}
				return v
			})
			req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(form))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Bearer "+readKey)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "控制台不接受 API 密钥") {
				t.Errorf("%s %s with a read key: status %d, want 401 控制台不接受 API 密钥", method, path, resp.StatusCode)
			}
		}
		// The console's changes that must be in the list: if the reading of
		// the routes broke, the test above would pass on nothing.
		if writes < 19 {
			t.Errorf("found %d console writes, want every one (19 when this test was written)", writes)
		}
		if n := audit(); n != auditBefore {
			t.Errorf("refused requests left %d audit entries", n-auditBefore)
		}
		if tg := mustTarget(t, st, "lianzhou_tzgg"); !tg.Enabled {
			t.Error("a read key switched a target off through the console")
		}

		// A page to read is not open to a key either.
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/targets", nil)
		req.Header.Set("Authorization", "Bearer "+readKey)
		if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /admin/targets with a key: %v %v, want 401", resp, err)
		} else {
			resp.Body.Close()
		}

		// The same user signed in changes the target.
		resp, err := client.PostForm(srv.URL+"/admin/login", url.Values{"username": {"wang"}, "password": {"correct horse battery"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var session *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == auth.CookieName {
				session = c
			}
		}
		if session == nil {
			t.Fatalf("login: status %d, no session cookie", resp.StatusCode)
		}
		req, _ = http.NewRequest(http.MethodPost, srv.URL+"/admin/targets/lianzhou_tzgg/enabled",
			strings.NewReader(url.Values{"enabled": {"0"}, "reason": {"停用"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(session)
		if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("switch off signed in: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		if tg := mustTarget(t, st, "lianzhou_tzgg"); tg.Enabled {
			t.Error("the signed-in operator could not switch the target off")
		}
	})
}
