package budget_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// t0 is 23:30 in UTC+8: the budget day ends half an hour later.
var t0 = time.Date(2026, 12, 2, 15, 30, 20, 0, time.UTC)

const mib = 1 << 20

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

var cheap = &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// process is one serve process on the shared database: its own store
// (connection pool), its own auth and budget services, one shared clock.
type process struct {
	st   *store.Store
	auth *auth.Service
	svc  *budget.Service
}

type world struct {
	clk   *clock
	procs []*process
	users map[string]bool
}

// newWorld opens n processes on one fresh database of the dialect.
func newWorld(t *testing.T, dialect string, n int) *world {
	t.Helper()
	var dsn string
	switch dialect {
	case store.DialectPostgres:
		dsn = storetest.PostgresURL(t)
	default:
		dsn = "sqlite://" + filepath.Join(t.TempDir(), "zhizhi.db")
	}
	w := &world{clk: &clock{t: t0}, users: map[string]bool{}}
	dataDir := t.TempDir()
	for range n {
		st, err := store.Open(context.Background(), dsn, dataDir)
		if err != nil {
			t.Fatalf("open %s store: %v", dialect, err)
		}
		t.Cleanup(func() { st.Close() })
		st.Now = w.clk.Now
		w.procs = append(w.procs, &process{st: st,
			auth: auth.New(st, auth.Options{Now: w.clk.Now, PasswordParams: cheap}),
			svc:  budget.New(st, w.clk.Now)})
	}
	return w
}

// forEachDialect runs fn on SQLite and on PostgreSQL, each with n
// processes on one database.
func forEachDialect(t *testing.T, n int, fn func(t *testing.T, w *world)) {
	for _, d := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(d, func(t *testing.T) { fn(t, newWorld(t, d, n)) })
	}
}

func (w *world) svc() *budget.Service { return w.procs[0].svc }

// key makes an API key for user (made with role when new) with scopes and
// limits (nil: the defaults), returning the key and its id.
func (w *world) key(t *testing.T, user string, role auth.Role, limits *budget.Limits, scopes ...string) (string, int64) {
	t.Helper()
	ctx := context.Background()
	a := w.procs[0].auth
	if !w.users[user] {
		if _, err := a.CreateUser(ctx, "cli:root", user, "a long enough passphrase", role); err != nil {
			t.Fatalf("create user %s: %v", user, err)
		}
		w.users[user] = true
	}
	key, k, err := a.CreateAPIKey(ctx, "cli:root", user, "test", scopes, nil)
	if err != nil {
		t.Fatalf("create key for %s: %v", user, err)
	}
	if limits != nil {
		if err := w.svc().SetLimits(ctx, "cli:root", k.ID, *limits); err != nil {
			t.Fatalf("set limits: %v", err)
		}
	}
	return key, k.ID
}
