package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds one numbered set of SQL files per dialect. Each file runs
// in its own transaction; goose records the applied versions in
// goose_db_version.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Migrate applies every pending migration and returns how many it applied.
// With PostgreSQL an advisory lock serialises concurrent migrators, so any
// number of processes may start at once.
func (s *Store) Migrate(ctx context.Context) (applied int, err error) {
	p, err := s.migrationProvider()
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return len(results), fmt.Errorf("migrate: %w", err)
	}
	return len(results), nil
}

// SchemaVersion returns the highest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	p, err := s.migrationProvider()
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

func (s *Store) migrationProvider() (*goose.Provider, error) {
	var (
		dialect goose.Dialect
		dir     string
		opts    = []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	)
	switch s.dialect {
	case DialectPostgres:
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		dialect, dir = goose.DialectSQLite3, "migrations/sqlite"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, s.db, sub, opts...)
}
