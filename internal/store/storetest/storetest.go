// Package storetest gives tests a fresh, migrated store on every dialect:
// SQLite in a temporary file and PostgreSQL in a throwaway database on the
// server named by ZHIZHI_TEST_PG_URL (make test starts one). Without that
// server the PostgreSQL half is skipped loudly, and fails under CI=true, so
// a green run always means both dialects were tested where it matters.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"zhizhi/internal/store"
)

// PGURLEnv names the PostgreSQL server used by tests.
const PGURLEnv = "ZHIZHI_TEST_PG_URL"

// ForEachDialect runs fn as the subtests "sqlite" and "postgres", each with
// a fresh migrated store that is closed (and, for PostgreSQL, dropped) when
// the subtest ends.
func ForEachDialect(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run(store.DialectSQLite, func(t *testing.T) {
		fn(t, SQLite(t))
	})
	t.Run(store.DialectPostgres, func(t *testing.T) {
		fn(t, Postgres(t))
	})
}

// ForEachDialectInParallel is ForEachDialect for a test that spends its
// time waiting (on polite rates, on timers): the test runs beside the
// package's other parallel tests and its two subtests beside each other.
// Like any parallel test it must share nothing with another one and set
// no environment variable of this process.
func ForEachDialectInParallel(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Parallel()
	t.Run(store.DialectSQLite, func(t *testing.T) {
		t.Parallel()
		fn(t, SQLite(t))
	})
	t.Run(store.DialectPostgres, func(t *testing.T) {
		t.Parallel()
		fn(t, Postgres(t))
	})
}

// SQLite returns a fresh migrated SQLite store in a temporary directory.
func SQLite(t testing.TB) *store.Store {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "zhizhi.db"), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatalf("open sqlite store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Postgres returns a fresh migrated store in a new database t_<random> on
// the server at ZHIZHI_TEST_PG_URL; the database is dropped when the test
// ends.
func Postgres(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), PostgresURL(t), t.TempDir())
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL makes a new empty database t_<random> on the server at
// ZHIZHI_TEST_PG_URL and returns a URL that uses it, for tests that open
// several stores (several workers) on one database. The database is
// dropped when the test ends. Without the server the test is skipped like
// Postgres does.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PGURLEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("POSTGRESQL TESTS CANNOT RUN: " + PGURLEnv + " is not set and CI=true requires them; run make test")
		}
		t.Skip("POSTGRESQL TESTS SKIPPED: " + PGURLEnv + " is not set; run make test")
	}
	return PostgresURLOn(t, base)
}

// PostgresURLOn is PostgresURL on the server at base, a test's own (one it
// stops and starts, say) rather than the shared one.
func PostgresURLOn(t testing.TB, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL", PGURLEnv)
	}
	// Tests never leave the machine (team rule): refuse a remote server.
	if host := u.Hostname(); host != "" && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Fatalf("%s must point at a loopback PostgreSQL, not %s", PGURLEnv, host)
		}
	}
	// A database of its own, not only a schema: PostgreSQL's advisory locks
	// (the per-host request lock among them) belong to a database, so two
	// tests that crawl simulated hosts of the same name would otherwise take
	// turns at each host, and tests that run in parallel would wait on each
	// other. The schema inside keeps the search_path the store expects.
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", PGURLEnv, err)
	}
	defer admin.Close()
	name := "t_" + randomHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatalf("create test database on %s: %v", PGURLEnv, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	own, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatalf("open test database %s: %v", name, err)
	}
	defer own.Close()
	if _, err := own.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create test schema in %s: %v", name, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails: crypto/rand crashes the program instead of returning an error
	return hex.EncodeToString(b)
}
