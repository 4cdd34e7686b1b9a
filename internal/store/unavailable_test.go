package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"zhizhi/internal/store"
)

// TestIsUnavailableTellsTheDatabaseFromTheSite: the errors of a database
// that cannot be used — a PostgreSQL nobody listens for, an SQLite file
// another writer holds past the busy wait — are IsUnavailable; a web site
// refusing the connection, a wrong statement or our own cancel are not.
func TestIsUnavailableTellsTheDatabaseFromTheSite(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nobody listens there now

	pg, err := sql.Open("pgx", fmt.Sprintf("postgres://zhizhi@%s/zhizhi?sslmode=disable&connect_timeout=5", closed))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	pgErr := pg.PingContext(ctx)
	if pgErr == nil || !store.IsUnavailable(pgErr) {
		t.Errorf("PostgreSQL refusing connections: IsUnavailable(%v) = false", pgErr)
	}

	_, httpErr := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + closed + "/")
	if httpErr == nil || store.IsUnavailable(httpErr) {
		t.Errorf("a site refusing the connection: IsUnavailable(%v) = true", httpErr)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := pg.PingContext(cancelled); store.IsUnavailable(err) {
		t.Errorf("our own cancel: IsUnavailable(%v) = true", err)
	}

	path := filepath.Join(t.TempDir(), "zhizhi.db")
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	writer, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(100)")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	_, lockErr := writer.ExecContext(ctx, `INSERT INTO t (k) VALUES (1)`)
	if lockErr == nil || !store.IsUnavailable(lockErr) {
		t.Errorf("SQLite locked past the busy wait: IsUnavailable(%v) = false", lockErr)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	_, badErr := writer.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
	if badErr == nil || store.IsUnavailable(badErr) {
		t.Errorf("a wrong statement: IsUnavailable(%v) = true", badErr)
	}
	if _, err := writer.ExecContext(ctx, `INSERT INTO t (k) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, dupErr := writer.ExecContext(ctx, `INSERT INTO t (k) VALUES (1)`)
	if dupErr == nil || store.IsUnavailable(dupErr) {
		t.Errorf("a constraint violation: IsUnavailable(%v) = true", dupErr)
	}
}
