// Package storetest gives tests a fresh, migrated store on every dialect:
// SQLite in a temporary file and PostgreSQL in a throwaway schema on the
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

// Postgres returns a fresh migrated store in a new schema t_<random> on the
// server at ZHIZHI_TEST_PG_URL; the schema is dropped when the test ends.
func Postgres(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), PostgresURL(t), t.TempDir())
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL makes a new empty schema t_<random> on the server at
// ZHIZHI_TEST_PG_URL and returns a database URL that uses it, for tests that
// open several stores (several workers) on one database. The schema is
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
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", PGURLEnv, err)
	}
	defer admin.Close()
	schema := "t_" + randomHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema on %s: %v", PGURLEnv, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails: crypto/rand crashes the program instead of returning an error
	return hex.EncodeToString(b)
}
