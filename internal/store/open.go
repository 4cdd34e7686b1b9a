package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// The settings named in error messages, so that the user knows what to fix.
const (
	settingDatabaseURL = "ZHIZHI_DATABASE_URL"
	settingDataDir     = "ZHIZHI_DATA_DIR"
)

// pingTimeout bounds the first contact with a database server, so a black-holed
// address fails with a message instead of hanging.
const pingTimeout = 10 * time.Second

// openDB picks the dialect from dsn, opens the pool and pings it.
func openDB(ctx context.Context, dsn string) (*sql.DB, string, error) {
	lower := strings.ToLower(dsn)
	switch {
	case dsn == "":
		return nil, "", fmt.Errorf("%s is empty — set it to sqlite:///path/to/zhizhi.db or postgres://user@host:port/db", settingDatabaseURL)
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		db, err := openPostgres(ctx, dsn)
		return db, DialectPostgres, err
	case strings.HasPrefix(lower, "sqlite:"):
		path := dsn[len("sqlite:"):]
		// sqlite:///abs/path keeps its leading slash; sqlite://rel/path is relative.
		path = strings.TrimPrefix(path, "//")
		db, err := openSQLite(ctx, path)
		return db, DialectSQLite, err
	case strings.Contains(dsn, "://"):
		scheme, _, _ := strings.Cut(dsn, "://")
		return nil, "", fmt.Errorf("%s has unsupported scheme %q — use sqlite:///path/to/zhizhi.db or postgres://user@host:port/db", settingDatabaseURL, scheme)
	default:
		db, err := openSQLite(ctx, dsn)
		return db, DialectSQLite, err
	}
}

// openDBExisting is openDB that creates nothing: a missing or empty SQLite
// file is ErrNoDatabase, and the file is opened read-write, never created.
func openDBExisting(ctx context.Context, dsn string) (*sql.DB, string, error) {
	lower := strings.ToLower(dsn)
	path := dsn
	switch {
	case strings.HasPrefix(lower, "sqlite:"):
		path = strings.TrimPrefix(dsn[len("sqlite:"):], "//")
	case dsn == "", strings.Contains(dsn, "://"):
		return openDB(ctx, dsn) // PostgreSQL creates nothing on open; errors as openDB words them
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return openDB(ctx, dsn)
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.IsDir()) {
		return nil, "", ErrNoDatabase
	}
	if err != nil {
		return nil, "", fmt.Errorf("cannot open SQLite database %s (%s): %v — check its permissions or fix %s", path, settingDatabaseURL, rootCause(err), settingDatabaseURL)
	}
	if fi.Size() == 0 {
		return nil, "", ErrNoDatabase // an empty file: opening it with the pragmas would write to it
	}
	db, err := sql.Open("sqlite", sqliteDSN(path)+"&mode=rw")
	if err != nil {
		return nil, "", fmt.Errorf("cannot open SQLite database %s (%s): %v", path, settingDatabaseURL, err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("cannot open SQLite database %s (%s): %v — check that the file and its directory are writable or fix %s", path, settingDatabaseURL, err, settingDatabaseURL)
	}
	return db, DialectSQLite, nil
}

// openSQLite opens the SQLite file at path. The pragmas go into the DSN so
// that every pooled connection has them: WAL lets readers run beside the one
// writer, busy_timeout makes a writer wait instead of failing at once,
// foreign_keys is off by default in SQLite. _txlock=immediate takes the write
// lock at BEGIN, which avoids the deadlock of two read-then-write
// transactions that busy_timeout cannot resolve.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%s must name an SQLite file, like sqlite:///var/lib/zhizhi/zhizhi.db (got %q)", settingDatabaseURL, path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create directory %s for the SQLite database (%s): %v — create it or fix %s", dir, settingDatabaseURL, rootCause(err), settingDatabaseURL)
		}
	}
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("cannot open SQLite database %s (%s): %v", path, settingDatabaseURL, err)
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot open SQLite database %s (%s): %v — check that the file and its directory are writable or fix %s", path, settingDatabaseURL, err, settingDatabaseURL)
	}
	return db, nil
}

func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// openPostgres opens a pgx pool and pings the server, translating the
// usual failures into one sentence that names the host and the setting but
// never the password.
func openPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the URL, password included: say less.
		return nil, fmt.Errorf("%s is not a valid PostgreSQL URL (%s) — use postgres://user@host:port/dbname", settingDatabaseURL, redactURL(dsn))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pingTimeout
	}
	addr := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		addr = cfg.Host // unix socket directory
	}
	db := stdlib.OpenDB(*cfg)
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, postgresOpenError(addr, cfg.User, cfg.Database, err)
	}
	return db, nil
}

func postgresOpenError(addr, user, database string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return fmt.Errorf("PostgreSQL at %s refused user %q (%s): %s — fix the user or password in %s", addr, user, settingDatabaseURL, pgErr.Message, settingDatabaseURL)
		case "3D000":
			return fmt.Errorf("PostgreSQL at %s has no database %q (%s) — create it (createdb %s) or fix %s", addr, database, settingDatabaseURL, database, settingDatabaseURL)
		}
		return fmt.Errorf("PostgreSQL at %s (%s): %s (%s) — fix %s or the server", addr, settingDatabaseURL, pgErr.Message, pgErr.Code, settingDatabaseURL)
	}
	var reason string
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case errors.As(err, &dnsErr):
		reason = "unknown host " + dnsErr.Name
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		reason = "no answer (timed out)"
	default:
		reason = rootCause(err).Error()
	}
	return fmt.Errorf("cannot reach PostgreSQL at %s (%s): %s — start the server or fix %s", addr, settingDatabaseURL, reason, settingDatabaseURL)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rootCause unwraps err to its innermost error, which is the readable part
// of a long driver chain ("connection refused", "permission denied").
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// redactURL shows a database URL without its password or query.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		scheme, _, _ := strings.Cut(dsn, "://")
		return scheme + "://…"
	}
	u.RawQuery = ""
	u.Fragment = ""
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// ensureWritableDir creates dir when missing and proves that files can be
// created in it, so a read-only data directory fails at start, not at the
// first blob write hours later.
func ensureWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create data directory %s (%s): %v — create it or set %s to a writable directory", dir, settingDataDir, rootCause(err), settingDataDir)
	}
	f, err := os.CreateTemp(dir, ".zhizhi-write-test-*")
	if err != nil {
		return fmt.Errorf("data directory %s is not writable (%s): %v — fix its permissions or set %s to a writable directory", dir, settingDataDir, rootCause(err), settingDataDir)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}
