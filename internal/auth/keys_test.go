package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestAPIKeys: a key authenticates as its user, with its user's role and
// its own scopes; an expired, a revoked, a mistyped key and a key in a
// header that is not Bearer are refused, and a bad key is never passed
// over for the session cookie the same request carries.
func TestAPIKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		exp := t0.Add(90 * 24 * time.Hour)
		key, k, err := w.svc.CreateAPIKey(ctx, root, "alice", "知识库", []string{"read", "export"}, &exp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.byKey(key)
		if err != nil || p.Username != "alice" || p.Role != auth.RoleOperator || p.APIKeyID != k.ID ||
			!slices.Equal(p.Scopes, []string{"read", "export"}) {
			t.Fatalf("by key: %+v %v", p, err)
		}
		if p.Actor() != "apikey:"+itoa(k.ID)+"(alice)" {
			t.Errorf("actor %q", p.Actor())
		}
		if !p.Allows(auth.ScopeRead) || !p.Allows(auth.ScopeExport) || p.Allows(auth.ScopeWrite) {
			t.Errorf("read,export key allows read %v export %v write %v", p.Allows("read"), p.Allows("export"), p.Allows("write"))
		}
		keys, err := w.svc.ListAPIKeys(ctx, "alice")
		if err != nil || len(keys) != 1 || keys[0].Prefix != key[:9] || keys[0].LastUsedAt == nil {
			t.Errorf("list: %+v %v, want one key shown by %q, with its last use", keys, err, key[:9])
		}

		for name, header := range map[string]string{
			"mistyped":            "Bearer " + key[:len(key)-1] + "x",
			"without zk_":         "Bearer " + strings.TrimPrefix(key, "zk_"),
			"not bearer":          "Basic " + key,
			"bearer with nothing": "Bearer ",
		} {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/articles", nil)
			r.Header.Set("Authorization", header)
			if _, err := w.svc.Authenticate(r); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("%s key: %v, want refused", name, err)
			}
		}
		token := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		r := httptest.NewRequest(http.MethodGet, "/api/v1/articles", nil)
		r.AddCookie(&http.Cookie{Name: "zhizhi_session", Value: token})
		r.Header.Set("Authorization", "Bearer zk_nonsense")
		if _, err := w.svc.Authenticate(r); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("a bad key with a good cookie: %v, want refused", err)
		}

		w.clk.Set(exp.Add(-time.Second))
		if _, err := w.byKey(key); err != nil {
			t.Errorf("a second before it expires: %v", err)
		}
		w.clk.Set(exp)
		if _, err := w.byKey(key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("expired key: %v, want refused", err)
		}

		w.clk.Set(t0)
		other, k2, err := w.svc.CreateAPIKey(ctx, root, "alice", "another", []string{"write"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.byKey(other); err != nil {
			t.Fatalf("key without expiry: %v", err)
		}
		if err := w.svc.RevokeAPIKey(ctx, root, k2.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.byKey(other); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("revoked key: %v, want refused", err)
		}
		if _, err := w.byKey(key); err != nil {
			t.Errorf("revoking one key stopped another: %v", err)
		}
		if err := w.svc.RevokeAPIKey(ctx, root, 9999); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("revoking an unknown key: %v", err)
		}

		// A key's role is its user's role, now.
		if err := w.svc.SetRole(ctx, root, "alice", auth.RoleViewer); err != nil {
			t.Fatal(err)
		}
		p, err = w.byKey(key)
		if err != nil || p.Role != auth.RoleViewer || p.Allows(auth.ScopeExport) || !p.Allows(auth.ScopeRead) {
			t.Errorf("after alice became a viewer: %+v %v, want a viewer's key that only reads", p, err)
		}
		if _, _, err := w.svc.CreateAPIKey(ctx, root, "alice", "more", []string{"read", "write"}, nil); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("a viewer's key with write: %v, want refused", err)
		}
	})
}

// TestAcquireKeys: an operator's key may carry acquire, and acquires but
// neither reads nor writes with it alone; a viewer's key may not have it.
func TestAcquireKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		w.addUser(t, "victor", alicePW, auth.RoleViewer)
		key, _, err := w.svc.CreateAPIKey(ctx, root, "alice", "agent", []string{auth.ScopeAcquire}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.byKey(key)
		if err != nil || !p.Allows(auth.ScopeAcquire) || p.Allows(auth.ScopeWrite) || p.Allows(auth.ScopeRead) {
			t.Errorf("acquire key: %+v %v, want acquire only", p, err)
		}
		_, _, err = w.svc.CreateAPIKey(ctx, root, "victor", "agent", []string{auth.ScopeRead, auth.ScopeAcquire}, nil)
		if !errors.Is(err, auth.ErrInvalid) || !strings.Contains(err.Error(), "acquire") {
			t.Errorf("a viewer's key with acquire: %v, want refused naming the scope", err)
		}
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestDisabledUser: disabling a user ends their sessions and stops their
// keys at once, and they cannot sign in; enabling them brings the keys
// back, not the sessions.
func TestDisabledUser(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		token := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		key, _, err := w.svc.CreateAPIKey(ctx, root, "alice", "feed", []string{"read"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.svc.DisableUser(ctx, "user:root", "alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.bySession(token); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("session of a disabled user: %v", err)
		}
		if _, err := w.byKey(key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("key of a disabled user: %v", err)
		}
		if _, _, err := w.login("alice", alicePW, "192.0.2.1", ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("login of a disabled user: %v, want refused like a wrong password", err)
		}
		if err := w.svc.EnableUser(ctx, "user:root", "alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.byKey(key); err != nil {
			t.Errorf("key after enabling: %v", err)
		}
		if _, err := w.bySession(token); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("the old session came back with enabling: %v", err)
		}
	})
}

// TestSetPasswordEndsSessions: a new password signs the user out
// everywhere; the old password no longer works, the new one does.
func TestSetPasswordEndsSessions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		token := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		if err := w.svc.SetPassword(context.Background(), root, "alice", "a brand new passphrase"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.bySession(token); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("session after a new password: %v", err)
		}
		if _, _, err := w.login("alice", alicePW, "192.0.2.1", ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("old password: %v", err)
		}
		mustLogin(t, w, "alice", "a brand new passphrase", "192.0.2.1")
	})
}

// TestScopes: a session allows what its role allows; a key what its scopes
// and its role both allow; an unknown scope and no caller allow nothing. A
// read key cannot acquire, an acquire key cannot write, and a viewer never
// acquires, key or session.
func TestScopes(t *testing.T) {
	op := func(scopes ...string) *auth.Principal {
		return &auth.Principal{UserID: 1, Role: auth.RoleOperator, APIKeyID: 3, Scopes: scopes}
	}
	tests := []struct {
		name                         string
		p                            *auth.Principal
		read, write, export, acquire bool
	}{
		{"viewer session", &auth.Principal{UserID: 1, Role: auth.RoleViewer}, true, false, false, false},
		{"operator session", &auth.Principal{UserID: 1, Role: auth.RoleOperator}, true, true, true, true},
		{"admin session", &auth.Principal{UserID: 1, Role: auth.RoleAdmin}, true, true, true, true},
		{"operator key read", op("read"), true, false, false, false},
		{"operator key export", op("export"), false, false, true, false},
		{"operator key acquire", op("acquire"), false, false, false, true},
		{"operator key read,acquire", op("read", "acquire"), true, false, false, true},
		{"viewer key write", &auth.Principal{UserID: 1, Role: auth.RoleViewer, APIKeyID: 3, Scopes: []string{"read", "write"}}, true, false, false, false},
		{"viewer key acquire", &auth.Principal{UserID: 1, Role: auth.RoleViewer, APIKeyID: 3, Scopes: []string{"read", "acquire"}}, true, false, false, false},
		{"key without scopes", &auth.Principal{UserID: 1, Role: auth.RoleAdmin, APIKeyID: 3}, false, false, false, false},
		{"unknown role", &auth.Principal{UserID: 1, Role: "root"}, false, false, false, false},
		{"nobody", nil, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for scope, want := range map[string]bool{auth.ScopeRead: tt.read, auth.ScopeWrite: tt.write,
				auth.ScopeExport: tt.export, auth.ScopeAcquire: tt.acquire} {
				if got := tt.p.Allows(scope); got != want {
					t.Errorf("%s: %v, want %v", scope, got, want)
				}
			}
			if tt.p.Allows("admin") || tt.p.Allows("") {
				t.Error("an unknown scope is allowed")
			}
		})
	}
	if s, err := auth.ParseScopes("acquire, export, READ ,read"); err != nil || !slices.Equal(s, []string{"read", "export", "acquire"}) {
		t.Errorf("ParseScopes: %v %v", s, err)
	}
	for _, bad := range []string{"", ",", "read,delete"} {
		if _, err := auth.ParseScopes(bad); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("ParseScopes(%q): %v", bad, err)
		}
	}
}

// TestCrossOrigin: a state-changing request a browser marks cross-site is
// refused before the handler runs; a same-origin one, a cross-site GET and
// an API client sending no browser headers pass.
func TestCrossOrigin(t *testing.T) {
	reached := 0
	h := auth.CrossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusNoContent)
	}))
	tests := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		want    int
	}{
		{"cross-site POST", "POST", "/admin/targets", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"cross-site POST to the API", "POST", "/api/v1/targets", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site POST", "POST", "/admin/targets", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"foreign Origin, old browser", "DELETE", "/admin/targets/1", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"same-origin POST", "POST", "/admin/targets", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://zhizhi.local"}, http.StatusNoContent},
		{"same Origin, old browser", "POST", "/admin/targets", map[string]string{"Origin": "http://zhizhi.local"}, http.StatusNoContent},
		{"typed into the address bar", "POST", "/admin/targets", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusNoContent},
		{"cross-site GET", "GET", "/admin/targets", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusNoContent},
		{"API client", "POST", "/api/v1/targets", map[string]string{"Authorization": "Bearer zk_x"}, http.StatusNoContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reached
			r := httptest.NewRequest(tt.method, "http://zhizhi.local"+tt.path, strings.NewReader("enabled=false"))
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d", rec.Code, tt.want)
			}
			if ran := reached > before; ran != (tt.want != http.StatusForbidden) {
				t.Errorf("handler ran: %v", ran)
			}
		})
	}
}

// TestMiddleware: the caller lands on the request's context; a request
// without credentials, or with dead ones, still reaches the handler, with
// no caller.
func TestMiddleware(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleAdmin)
		token := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		var got *auth.Principal
		h := w.svc.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			got, _ = auth.FromContext(r.Context())
			rw.WriteHeader(http.StatusTeapot)
		}))
		for name, cookie := range map[string]string{"signed in": token, "no cookie": "", "dead cookie": "nonsense"} {
			got = nil
			r := httptest.NewRequest(http.MethodGet, "/admin/", nil)
			if cookie != "" {
				r.AddCookie(&http.Cookie{Name: "zhizhi_session", Value: cookie})
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != http.StatusTeapot {
				t.Errorf("%s: status %d, want the handler's", name, rec.Code)
			}
			if signedIn := got != nil; signedIn != (name == "signed in") {
				t.Errorf("%s: principal %+v", name, got)
			}
		}
	})
}

// TestAuditEveryWrite: every change to users and keys is in the audit
// trail with who made it, before and after, and neither a password, a hash
// nor a key is in any entry; a refused change records nothing.
func TestAuditEveryWrite(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, auth.Options{})
		const actor = "user:root"
		var secret string // the key, once made
		steps := []struct {
			action, object string
			do             func() error
		}{
			{"user.add", "alice", func() error {
				_, err := w.svc.CreateUser(ctx, actor, "alice", alicePW, auth.RoleOperator)
				return err
			}},
			{"user.passwd", "alice", func() error { return w.svc.SetPassword(ctx, actor, "alice", "a brand new passphrase") }},
			{"user.role", "alice", func() error { return w.svc.SetRole(ctx, actor, "alice", auth.RoleAdmin) }},
			{"apikey.create", "1", func() error {
				key, _, err := w.svc.CreateAPIKey(ctx, actor, "alice", "feed", []string{"read"}, nil)
				if err == nil {
					secret = key
				}
				return err
			}},
			{"apikey.revoke", "1", func() error { return w.svc.RevokeAPIKey(ctx, actor, 1) }},
			{"user.disable", "alice", func() error { return w.svc.DisableUser(ctx, actor, "alice") }},
			{"user.enable", "alice", func() error { return w.svc.EnableUser(ctx, actor, "alice") }},
		}
		for i, s := range steps {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.action, err)
			}
			entries, err := st.ListAudit(ctx, store.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != i+1 {
				t.Fatalf("after %s: %d audit entries, want %d", s.action, len(entries), i+1)
			}
			e := entries[0]
			if e.Action != s.action || e.Actor != actor || e.ObjectID != s.object || len(e.After) == 0 {
				t.Errorf("%s recorded as %+v", s.action, e)
			}
			all := string(e.Before) + string(e.After) + e.Detail
			for _, secret := range []string{alicePW, "a brand new passphrase", "argon2id", secret} {
				if secret != "" && strings.Contains(all, secret) {
					t.Errorf("%s entry holds a secret: %s", s.action, all)
				}
			}
		}
		entries, _ := st.ListAudit(ctx, store.AuditFilter{ObjectType: "user", ObjectID: "alice"})
		for _, e := range entries {
			if e.Action == "user.role" && (!strings.Contains(string(e.Before), `"operator"`) || !strings.Contains(string(e.After), `"admin"`)) {
				t.Errorf("role change recorded as %s -> %s", e.Before, e.After)
			}
		}
		n := len(entries)
		if _, err := w.svc.CreateUser(ctx, actor, "alice", alicePW, auth.RoleViewer); !errors.Is(err, auth.ErrExists) {
			t.Errorf("a second alice: %v", err)
		}
		if err := w.svc.SetRole(ctx, actor, "nobody", auth.RoleViewer); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("role of an unknown user: %v", err)
		}
		if after, _ := st.ListAudit(ctx, store.AuditFilter{ObjectType: "user"}); len(after) != n {
			t.Errorf("refused changes left audit entries: %d, want %d", len(after), n)
		}
	})
}

// TestUserInput: bad usernames, passwords and roles are refused with a
// message saying what to do.
func TestUserInput(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, auth.Options{})
	ctx := context.Background()
	for name, c := range map[string]struct {
		user, pw string
		role     auth.Role
		want     string
	}{
		"empty name":     {"", alicePW, auth.RoleViewer, "use 1 to 64"},
		"space in name":  {"al ice", alicePW, auth.RoleViewer, "lowercase letters"},
		"actor-breaking": {"a(b)", alicePW, auth.RoleViewer, "lowercase letters"},
		"short password": {"alice", "1234567", auth.RoleViewer, "at least 8"},
		"unknown role":   {"alice", alicePW, "root", "use viewer, operator or admin"},
	} {
		_, err := w.svc.CreateUser(ctx, root, c.user, c.pw, c.role)
		if !errors.Is(err, auth.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid, saying %q", name, err, c.want)
		}
	}
	u, err := w.svc.CreateUser(ctx, root, " Alice ", "12345678", auth.RoleViewer)
	if err != nil || u.Username != "alice" {
		t.Errorf("a name typed with capitals and spaces: %+v %v, want alice", u, err)
	}
	if _, err := auth.ParseRole("Operator"); err != nil {
		t.Error(err)
	}
	if _, err := auth.ParseRole("superuser"); !errors.Is(err, auth.ErrInvalid) {
		t.Errorf("ParseRole(superuser): %v", err)
	}
}
