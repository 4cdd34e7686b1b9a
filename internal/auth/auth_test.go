package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// clock is the time every rule in a test reads; tests move it by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// cheap argon2id parameters: the tests hash many passwords.
var cheap = &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

const (
	alicePW = "correct horse battery staple"
	root    = "cli:root"
)

type world struct {
	st  *store.Store
	svc *auth.Service
	clk *clock
}

func newWorld(t *testing.T, st *store.Store, opt auth.Options) *world {
	t.Helper()
	clk := &clock{t: t0}
	st.Now = clk.Now
	opt.Now = clk.Now
	opt.PasswordParams = cheap
	return &world{st: st, svc: auth.New(st, opt), clk: clk}
}

func (w *world) addUser(t *testing.T, name, pw string, role auth.Role) {
	t.Helper()
	if _, err := w.svc.CreateUser(context.Background(), root, name, pw, role); err != nil {
		t.Fatalf("add user %s: %v", name, err)
	}
}

// login signs in from ip, carrying cookie (when not ""), and returns the new
// session cookie.
func (w *world) login(name, pw, ip, cookie string) (*auth.Principal, *http.Cookie, error) {
	r := httptest.NewRequest(http.MethodPost, "/admin/login", nil)
	r.RemoteAddr = ip + ":40000"
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: "zhizhi_session", Value: cookie})
	}
	rec := httptest.NewRecorder()
	p, err := w.svc.Login(rec, r, name, pw)
	var c *http.Cookie
	for _, k := range rec.Result().Cookies() {
		if k.Name == "zhizhi_session" {
			c = k
		}
	}
	return p, c, err
}

func (w *world) bySession(token string) (*auth.Principal, error) {
	r := httptest.NewRequest(http.MethodGet, "/admin/", nil)
	r.AddCookie(&http.Cookie{Name: "zhizhi_session", Value: token})
	return w.svc.Authenticate(r)
}

func (w *world) byKey(key string) (*auth.Principal, error) {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/articles", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	return w.svc.Authenticate(r)
}

func mustLogin(t *testing.T, w *world, name, pw, ip string) string {
	t.Helper()
	_, c, err := w.login(name, pw, ip, "")
	if err != nil || c == nil || c.Value == "" {
		t.Fatalf("login %s: %v (cookie %v)", name, err, c)
	}
	return c.Value
}

// TestSecretsNeverStored: the password is kept as an argon2id hash, and
// neither the password, nor a session token, nor an API key appears
// anywhere in the database, in any table or column.
func TestSecretsNeverStored(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		const newPW = "another long passphrase"
		if err := w.svc.SetPassword(ctx, root, "alice", newPW); err != nil {
			t.Fatal(err)
		}
		token := mustLogin(t, w, "alice", newPW, "192.0.2.1")
		if _, _, err := w.login("alice", "wrong "+alicePW, "192.0.2.1", ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("wrong password: %v", err)
		}
		key, _, err := w.svc.CreateAPIKey(ctx, root, "alice", "export job", []string{"read", "export"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(key, "zk_") {
			t.Errorf("key %q does not start with zk_", key)
		}
		var hash string
		if err := st.DB().QueryRowContext(ctx, `SELECT password_hash FROM app_user WHERE username = 'alice'`).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(hash, "$argon2id$") {
			t.Errorf("password kept as %q, want an argon2id hash", hash)
		}
		secrets := map[string]string{"first password": alicePW, "password": newPW, "wrong password": "wrong " + alicePW,
			"session token": token, "api key": key, "api key without zk_": strings.TrimPrefix(key, "zk_")}
		for _, table := range []string{"app_user", "user_session", "api_key", "login_failure", "audit_log"} {
			rows, err := st.DB().QueryContext(ctx, "SELECT * FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			n := 0
			for rows.Next() {
				n++
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					text := fmt.Sprint(v)
					if b, ok := v.([]byte); ok {
						text = string(b)
					}
					for what, secret := range secrets {
						if strings.Contains(text, secret) {
							t.Errorf("%s.%s holds the %s", table, cols[i], what)
						}
					}
				}
			}
			rows.Close()
			if n == 0 {
				t.Errorf("table %s is empty: the scan looked at nothing", table)
			}
		}
	})
}

// TestSessionFixation: a session the browser carried into login (planted
// by someone else, or the user's own old one) is dead afterwards, and the
// new session has a different identifier; the cookie is HttpOnly,
// SameSite=Lax, Path=/, Secure when configured, 32 random bytes.
func TestSessionFixation(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{CookieSecure: true})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		w.addUser(t, "mallory", "mallory's own password", auth.RoleViewer)
		planted := mustLogin(t, w, "mallory", "mallory's own password", "198.51.100.9")
		p, c, err := w.login("alice", alicePW, "192.0.2.1", planted)
		if err != nil || p.Username != "alice" {
			t.Fatalf("login: %v %+v", err, p)
		}
		if c.Value == planted {
			t.Fatal("login kept the session identifier the request carried")
		}
		if _, err := w.bySession(planted); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("the carried session still works after login: %v", err)
		}
		got, err := w.bySession(c.Value)
		if err != nil || got.Username != "alice" || got.Role != auth.RoleOperator || got.APIKeyID != 0 {
			t.Errorf("new session: %+v %v", got, err)
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || !c.Secure {
			t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, Secure", c)
		}
		if len(c.Value) != 43 { // 32 bytes in unpadded base64
			t.Errorf("session token %q is %d characters, want 32 random bytes (43)", c.Value, len(c.Value))
		}
		w2 := newWorld(t, st, auth.Options{})
		_, c2, err := w2.login("alice", alicePW, "192.0.2.1", "")
		if err != nil || c2.Secure {
			t.Errorf("without CookieSecure: %v, cookie Secure=%v", err, c2 != nil && c2.Secure)
		}
	})
}

// TestSessionExpiry: a session unused for 2 h ends; one in steady use ends
// 12 h after login all the same.
func TestSessionExpiry(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)

		idle := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		w.clk.Set(t0.Add(time.Hour))
		if _, err := w.bySession(idle); err != nil {
			t.Fatalf("after 1 h: %v", err)
		}
		w.clk.Set(t0.Add(time.Hour + 2*time.Hour - time.Second))
		if _, err := w.bySession(idle); err != nil {
			t.Fatalf("unused for 2 h less a second: %v", err)
		}
		w.clk.Set(t0.Add(time.Hour + 2*time.Hour - time.Second + 2*time.Hour))
		if _, err := w.bySession(idle); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("unused for 2 h: %v, want it ended", err)
		}

		start := t0.Add(10 * time.Hour)
		w.clk.Set(start)
		busy := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		for h := 1; h < 12; h++ {
			w.clk.Set(start.Add(time.Duration(h) * time.Hour))
			if _, err := w.bySession(busy); err != nil {
				t.Fatalf("in use, %d h after login: %v", h, err)
			}
		}
		w.clk.Set(start.Add(12*time.Hour - time.Second))
		if _, err := w.bySession(busy); err != nil {
			t.Fatalf("in use, 12 h less a second after login: %v", err)
		}
		w.clk.Set(start.Add(12 * time.Hour))
		if _, err := w.bySession(busy); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("12 h after login, used a second ago: %v, want it ended", err)
		}
	})
}

// TestLogout: the session ends and the cookie is cleared.
func TestLogout(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		token := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		other := mustLogin(t, w, "alice", alicePW, "192.0.2.1")
		r := httptest.NewRequest(http.MethodPost, "/admin/logout", nil)
		r.AddCookie(&http.Cookie{Name: "zhizhi_session", Value: token})
		rec := httptest.NewRecorder()
		if err := w.svc.Logout(rec, r); err != nil {
			t.Fatal(err)
		}
		if _, err := w.bySession(token); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("session after logout: %v", err)
		}
		if _, err := w.bySession(other); err != nil {
			t.Errorf("logout ended the user's other session too: %v", err)
		}
		cs := rec.Result().Cookies()
		if len(cs) != 1 || cs[0].Name != "zhizhi_session" || cs[0].MaxAge >= 0 || cs[0].Value != "" {
			t.Errorf("logout cookies %+v, want zhizhi_session cleared", cs)
		}
	})
}

// TestLoginRateLimit: after 5 failed logins for a username within 15 min
// the 6th attempt is refused even with the right password, saying how long
// to wait; 15 min later it works. The same holds after 50 failures from one
// client address across usernames (the peer address, not X-Forwarded-For),
// for an unknown
// username, and for a second server process on the same database. A
// success clears the username's count.
func TestLoginRateLimit(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		w.addUser(t, "bob", "bob's long password", auth.RoleViewer)

		for i := range 5 {
			// From five addresses, so only the username's count is reached.
			ip := fmt.Sprintf("192.0.2.%d", 10+i)
			if _, _, err := w.login("alice", "guess", ip, ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: %v", i+1, err)
			}
		}
		w.clk.Set(t0.Add(5 * time.Minute))
		_, c, err := w.login("alice", alicePW, "203.0.113.1", "")
		var rl *auth.RateLimitError
		if !errors.As(err, &rl) || !errors.Is(err, auth.ErrRateLimited) || c != nil {
			t.Fatalf("6th attempt, right password: %v (cookie %v), want refused", err, c)
		}
		if rl.RetryAfter != 10*time.Minute {
			t.Errorf("RetryAfter %v, want 10m (the first failure, at 0, counts until 15 min)", rl.RetryAfter)
		}
		restarted := auth.New(st, auth.Options{Now: w.clk.Now, PasswordParams: cheap})
		if _, err := restarted.Login(httptest.NewRecorder(), httptest.NewRequest("POST", "/admin/login", nil), "alice", alicePW); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("another server on the same database: %v, want refused", err)
		}
		if _, _, err := w.login("ALICE ", alicePW, "203.0.113.1", ""); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("the same username written differently: %v, want refused", err)
		}
		w.clk.Set(t0.Add(15 * time.Minute))
		if _, _, err := w.login("alice", alicePW, "203.0.113.1", ""); err != nil {
			t.Fatalf("15 min after the failures: %v", err)
		}

		// A success clears alice's count: 4 failures, a success, 4 more
		// failures, all within 15 min, and she still gets in.
		w.clk.Set(t0.Add(20 * time.Minute))
		for round := range 2 {
			for i := range 4 {
				if _, _, err := w.login("alice", "guess", fmt.Sprintf("192.0.2.%d", 20+4*round+i), ""); !errors.Is(err, auth.ErrBadCredentials) {
					t.Fatalf("round %d, failure %d: %v", round+1, i+1, err)
				}
			}
			if _, _, err := w.login("alice", alicePW, "203.0.113.1", ""); err != nil {
				t.Fatalf("round %d: 4 failures after a success: %v, want the count to have started again", round+1, err)
			}
		}

		// One address guessing across usernames: 50 failures in 15 min
		// (10 names, 5 each) refuse the next attempt from it, whoever it
		// names, with the right password too.
		w.clk.Set(t0.Add(time.Hour))
		for i := range 50 {
			if _, _, err := w.login(fmt.Sprintf("spray%d", i/5), "guess", "198.51.100.7", ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d from one address: %v", i+1, err)
			}
		}
		r := httptest.NewRequest(http.MethodPost, "/admin/login", nil)
		r.RemoteAddr = "198.51.100.7:5555"
		r.Header.Set("X-Forwarded-For", "203.0.113.200")
		if _, err := w.svc.Login(httptest.NewRecorder(), r, "alice", alicePW); !errors.As(err, &rl) || rl.RetryAfter != 15*time.Minute {
			t.Errorf("51st attempt from the address (X-Forwarded-For set, no proxy header configured): %v, want refused for 15m", err)
		}
		if _, _, err := w.login("bob", "bob's long password", "198.51.100.8", ""); err != nil {
			t.Errorf("bob from another address: %v", err)
		}
		w.clk.Set(t0.Add(time.Hour + 15*time.Minute))
		if _, _, err := w.login("alice", alicePW, "198.51.100.7", ""); err != nil {
			t.Errorf("15 min later from the address: %v", err)
		}

		// Unknown usernames are limited like known ones.
		w.clk.Set(t0.Add(2 * time.Hour))
		for i := range 5 {
			if _, _, err := w.login("ghost", "guess", fmt.Sprintf("192.0.2.%d", 30+i), ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d on an unknown user: %v", i+1, err)
			}
		}
		if _, _, err := w.login("ghost", "guess", "192.0.2.40", ""); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("6th attempt on an unknown user: %v, want refused like a real one", err)
		}
	})
}

// TestLoginRateLimitRace: wrong passwords tried all at once are checked no
// more than 5 times; the rest are refused before their password is looked
// at.
func TestLoginRateLimitRace(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			checked, others int
		)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := w.login("alice", "guess", fmt.Sprintf("192.0.2.%d", 50+i), "")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, auth.ErrBadCredentials):
					checked++
				case errors.Is(err, auth.ErrRateLimited):
				default:
					others++
					t.Errorf("attempt: %v", err)
				}
			}()
		}
		wg.Wait()
		if checked > 5 || checked == 0 {
			t.Errorf("%d of 12 simultaneous guesses had their password checked, want 1 to 5", checked)
		}
		if _, _, err := w.login("alice", alicePW, "203.0.113.1", ""); checked == 5 && !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("after 5 failures: %v, want refused", err)
		}
	})
}

// TestLoginLimitAcrossProcesses: two servers on one database (two store
// handles, as two processes have) share the count: failures on one refuse
// the next attempt on the other.
func TestLoginLimitAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			var dsn, dir = "", t.TempDir()
			if dialect == "sqlite" {
				dsn = "sqlite://" + filepath.Join(dir, "zhizhi.db")
			} else {
				dsn = storetest.PostgresURL(t)
			}
			open := func() *store.Store {
				st, err := store.Open(ctx, dsn, dir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			a, b := newWorld(t, open(), auth.Options{}), newWorld(t, open(), auth.Options{})
			a.addUser(t, "alice", alicePW, auth.RoleOperator)
			for i := range 5 {
				if _, _, err := a.login("alice", "guess", fmt.Sprintf("192.0.2.%d", i), ""); !errors.Is(err, auth.ErrBadCredentials) {
					t.Fatalf("failure %d: %v", i+1, err)
				}
			}
			if _, _, err := b.login("alice", alicePW, "203.0.113.1", ""); !errors.Is(err, auth.ErrRateLimited) {
				t.Errorf("the other server after 5 failures: %v, want refused", err)
			}
		})
	}
}

// TestLoginLimitSparesTheOffice: staff behind one NAT address. Four failed
// logins for a name nobody has and one wrong password for demo, all from
// the office's address, do not keep demo out with the right password; nor
// do 49 failures of colleagues. A success is no failure of the address:
// after 49 failures and demo's success, a colleague still gets in (the
// 50th failure would have closed the address).
func TestLoginLimitSparesTheOffice(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "demo", alicePW, auth.RoleOperator)
		w.addUser(t, "li", "li's long password", auth.RoleViewer)
		const office = "203.0.113.50"
		for i := range 4 {
			if _, _, err := w.login("nosuch", "guess", office, ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d on an unknown name: %v", i+1, err)
			}
		}
		if _, _, err := w.login("demo", "typo", office, ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("demo's typo: %v", err)
		}
		mustLogin(t, w, "demo", alicePW, office)

		// 49 failures from the office in all (5 already, 44 more: colleagues
		// mistyping, 4 each, so no name is limited).
		for i := range 44 {
			if _, _, err := w.login(fmt.Sprintf("colleague%d", i/4), "typo", office, ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("colleague failure %d: %v", i+1, err)
			}
		}
		mustLogin(t, w, "demo", alicePW, office)
		mustLogin(t, w, "li", "li's long password", office)
		// The 50th failure closes the address for everyone.
		if _, _, err := w.login("nosuch2", "guess", office, ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("50th failure: %v", err)
		}
		if _, _, err := w.login("li", "li's long password", office, ""); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("after 50 failures from the address: %v, want refused", err)
		}
	})
}

// TestLoginLimitIPv6PerSlash64: a host picks its IPv6 addresses from a
// whole /64, so 50 failures spread over addresses of one /64 close the
// /64; an address of another /64 is not held back by them.
func TestLoginLimitIPv6PerSlash64(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		for i := range 50 {
			ip := fmt.Sprintf("[2001:db8:1:2::%x]", i+1)
			if _, _, err := w.login(fmt.Sprintf("guess%d", i/5), "guess", ip, ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: %v", i+1, err)
			}
		}
		if _, _, err := w.login("alice", alicePW, "[2001:db8:1:2:ffff::1]", ""); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("a fresh address in the same /64: %v, want refused", err)
		}
		mustLogin(t, w, "alice", alicePW, "[2001:db8:1:3::1]")
	})
}

// TestLoginLimitBehindProxy: with the proxy's header configured, as the
// portal reads it, failures are counted per client behind the proxy: one
// client's guesses do not close the proxy's address for the others, and
// the header is not believed from a peer that is no proxy.
func TestLoginLimitBehindProxy(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st, auth.Options{ClientIPHeader: "X-Real-IP"})
		w.addUser(t, "alice", alicePW, auth.RoleOperator)
		login := func(name, pw, peer, client string) error {
			r := httptest.NewRequest(http.MethodPost, "/admin/login", nil)
			r.RemoteAddr = peer + ":40000"
			r.Header.Set("X-Real-IP", client)
			_, err := w.svc.Login(httptest.NewRecorder(), r, name, pw)
			return err
		}
		for i := range 50 {
			if err := login(fmt.Sprintf("guess%d", i/5), "guess", "127.0.0.1", "198.51.100.9"); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: %v", i+1, err)
			}
		}
		if err := login("alice", alicePW, "127.0.0.1", "198.51.100.9"); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("the guessing client behind the proxy: %v, want refused", err)
		}
		if err := login("alice", alicePW, "127.0.0.1", "198.51.100.10"); err != nil {
			t.Errorf("another client behind the same proxy: %v, want signed in", err)
		}
		// A peer on the internet writing the header counts as itself.
		for i := range 50 {
			if err := login(fmt.Sprintf("guess%d", 10+i/5), "guess", "203.0.113.77", fmt.Sprintf("192.0.2.%d", i)); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d from a peer that is no proxy: %v", i+1, err)
			}
		}
		if err := login("alice", alicePW, "203.0.113.77", "192.0.2.200"); !errors.Is(err, auth.ErrRateLimited) {
			t.Errorf("a peer that is no proxy, with a new header value: %v, want refused", err)
		}
	})
}
