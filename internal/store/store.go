// Package store owns zhizhi's database: the collector's schema and the
// runtime state tables, migrations embedded per dialect, and
// every SQL statement the other packages need. It speaks to embedded SQLite
// (modernc.org/sqlite) and to PostgreSQL (pgx) through database/sql; the few
// places where the two dialects differ are switches inside this package, so
// callers never see them. Blobs (raw HTML, text, attachments) are named by
// their SHA-256 and live where every process sharing the database can read
// them: on disk in the data directory with SQLite, in the database with
// PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Dialect names returned by (*Store).Dialect.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Errors callers may test for with errors.Is.
var (
	// ErrNotFound is returned by lookups that find no row.
	ErrNotFound = errors.New("not found")
	// ErrSummaryContent refuses full text, raw HTML or stored attachments for
	// an article of a site whose access policy is summary.
	ErrSummaryContent = errors.New("site access is summary: full text, raw HTML and attachment files are not stored")
	// ErrPendingBinding refuses a target whose site department has not been
	// given a dept_binding yet.
	ErrPendingBinding = errors.New("site department dept_binding is pending: choose a binding before adding targets")
	// ErrNoDatabase is returned by OpenExisting when the database it names
	// does not exist or holds no zhizhi schema.
	ErrNoDatabase = errors.New("no zhizhi database")
)

// Store is the database handle every package shares.
type Store struct {
	db      *sql.DB
	dialect string
	dataDir string
	dsn     string

	// The directory of SQLite host locks (LockHost), found once.
	lockDirOnce sync.Once
	lockDir     string
	lockDirErr  error

	// Now is the clock used for created_at/updated_at and similar stamps.
	// Tests replace it; it defaults to time.Now.
	Now func() time.Time

	// The last article updated_at handed out: stamps only grow, so the
	// export cursor (updated_at, id) never passes a row still to commit.
	stampMu   sync.Mutex
	lastStamp time.Time

	// afterBlobScan, when a test sets it, runs between gc's scan of the
	// blob table and its deletes: the moment a crawl's Put can slip in.
	afterBlobScan func()
}

// Open connects to the database named by dsn, creates dataDir (and the
// SQLite file's directory) when missing, checks that the server answers and
// applies pending migrations. dsn is sqlite:///abs/path.db, sqlite://rel/path.db,
// a bare file path, or a postgres:// / postgresql:// URL. Every failure is
// one readable message naming the setting to fix.
func Open(ctx context.Context, dsn, dataDir string) (*Store, error) {
	if dataDir != "" {
		if err := ensureWritableDir(dataDir); err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
	}
	db, dialect, err := openDB(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	s := &Store{db: db, dialect: dialect, dataDir: dataDir, dsn: dsn, Now: time.Now}
	if _, err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return s, nil
}

// OpenExisting is Open for the commands that only read or change what is
// there: it never creates anything. A missing SQLite file, a missing data
// directory (with SQLite, where it holds the blobs) or a database without
// zhizhi's schema (an empty file, an empty PostgreSQL database) is
// ErrNoDatabase, with a message that says where it looked and what to do; no
// file, directory or table is created and no migration runs on an empty
// database. An existing zhizhi database at an older schema version is
// migrated, as Open does: its data is there and the upgrade is what the
// binary needs to read it.
func OpenExisting(ctx context.Context, dsn, dataDir string) (*Store, error) {
	noDB := func() error {
		return fmt.Errorf("%w at %s; run `zhizhi migrate` or check %s", ErrNoDatabase, redactURL(dsn), settingDataDir)
	}
	db, dialect, err := openDBExisting(ctx, dsn)
	if errors.Is(err, ErrNoDatabase) {
		return nil, noDB()
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	s := &Store{db: db, dialect: dialect, dataDir: dataDir, dsn: dsn, Now: time.Now}
	ok, err := s.hasSchema(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if !ok {
		db.Close()
		return nil, noDB()
	}
	if dialect == DialectSQLite && dataDir != "" {
		if fi, err := os.Stat(dataDir); err != nil || !fi.IsDir() {
			db.Close()
			return nil, fmt.Errorf("%w: data directory %s is missing (the database at %s keeps its files there); check %s", ErrNoDatabase, dataDir, redactURL(dsn), settingDataDir)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return s, nil
}

// hasSchema reports whether the database holds zhizhi's schema: the
// migration ledger and the table every migration set starts with.
func (s *Store) hasSchema(ctx context.Context) (bool, error) {
	var q string
	switch s.dialect {
	case DialectPostgres:
		q = `SELECT count(*) FROM information_schema.tables
		     WHERE table_schema = current_schema() AND table_name IN ('goose_db_version', 'crawl_site')`
	default:
		q = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('goose_db_version', 'crawl_site')`
	}
	var n int
	if err := s.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, err
	}
	return n == 2, nil
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect }

// DB returns the underlying pool, for the rare caller that needs raw access
// (tests, health checks). Prefer the typed methods.
func (s *Store) DB() *sql.DB { return s.db }

// DataDir returns the data directory the store was opened with.
func (s *Store) DataDir() string { return s.dataDir }

// Blobs returns the content-addressed file store: files under the data
// directory with SQLite, the blob table with PostgreSQL.
func (s *Store) Blobs() Blobs { return Blobs{Dir: s.dataDir, s: s} }

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// now returns the store clock in UTC, truncated to the microsecond that
// PostgreSQL keeps, so a value read back equals the value written.
func (s *Store) now() time.Time {
	return s.Now().UTC().Truncate(time.Microsecond)
}
