package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The job queue (River) has its own connections to the same database: on
// SQLite one connection, as River's SQLite driver wants (it runs its
// maintenance side by side and a second writer would only meet "database is
// locked"); on PostgreSQL a pgx pool, which River's driver needs for
// LISTEN/NOTIFY. The queue's tables are River's own; no SQL of zhizhi's
// touches them.

// QueueSQLiteDB opens one more handle on the SQLite file, limited to one
// connection, for the job queue. The caller closes it.
func (s *Store) QueueSQLiteDB(ctx context.Context) (*sql.DB, error) {
	if s.dialect != DialectSQLite {
		return nil, fmt.Errorf("queue database: not SQLite")
	}
	path := s.dsn
	if strings.HasPrefix(strings.ToLower(path), "sqlite:") {
		path = strings.TrimPrefix(path[len("sqlite:"):], "//")
	}
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("queue database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("queue database %s: %w", path, err)
	}
	return db, nil
}

// QueuePGXPool opens a pgx pool of at most maxConns connections on the
// PostgreSQL database, for the job queue. The caller closes it.
func (s *Store) QueuePGXPool(ctx context.Context, maxConns int32) (*pgxpool.Pool, error) {
	if s.dialect != DialectPostgres {
		return nil, fmt.Errorf("queue database: not PostgreSQL")
	}
	cfg, err := pgxpool.ParseConfig(s.dsn)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid PostgreSQL URL (%s)", settingDatabaseURL, redactURL(s.dsn))
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = pingTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, postgresOpenError(cfg.ConnConfig.Host, cfg.ConnConfig.User, cfg.ConnConfig.Database, err)
	}
	return pool, nil
}

// ErrServeRunning says another serve process already works this SQLite
// database.
var ErrServeRunning = errors.New("another zhizhi serve is already running on this SQLite database")

// LockServe makes sure only one serve process works an SQLite database: the
// embedded database is for one machine and one process (use PostgreSQL for
// several). It holds an flock on <database file>.locks/serve@.lock ('@' is
// never in a host name, so no host lock shares it) until release; the
// kernel drops it when the process dies. On PostgreSQL any number of serve
// processes may run and release does nothing.
func (s *Store) LockServe(ctx context.Context) (release func(), err error) {
	if s.dialect == DialectPostgres {
		return func() {}, nil
	}
	dir, err := s.hostLockDir(ctx)
	if err != nil {
		return nil, fmt.Errorf("serve lock: %w", err)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	release, err = lockFile(wait, filepath.Join(dir, "serve@.lock"))
	if err != nil {
		if wait.Err() != nil && ctx.Err() == nil {
			return nil, ErrServeRunning
		}
		return nil, fmt.Errorf("serve lock: %w", err)
	}
	return release, nil
}
