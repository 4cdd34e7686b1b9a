package cli

import (
	"context"

	"github.com/spf13/cobra"

	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// openStore opens the configured database for a command that reads or
// changes what is there. It never creates one: a missing or empty database
// exits 2 with "no zhizhi database at …", so a typo in ZHIZHI_DATA_DIR is
// never answered from an empty database as if all were well. Any other
// failure to open (server unreachable, bad URL, unreadable file) exits 2
// too: the command could not look. An existing zhizhi database at an older
// schema version is migrated first, the job queue's tables included.
func openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.OpenExisting(ctx, databaseURL(), settings.DataDir)
	if err != nil {
		return nil, exitCode(2, err.Error())
	}
	return migrateQueue(ctx, st)
}

// createStore opens the configured database, creating the data directory,
// the SQLite file and the schema when missing. Only the commands that set a
// database up use it: migrate, demo and serve (config sync and dept import
// open with store.Open directly).
func createStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, databaseURL(), settings.DataDir)
	if err != nil {
		return nil, exitCode(2, err.Error())
	}
	return migrateQueue(ctx, st)
}

// migrateQueue migrates the job queue's tables with zhizhi's own.
func migrateQueue(ctx context.Context, st *store.Store) (*store.Store, error) {
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, exitCode(2, "open database: "+err.Error())
	}
	return st, nil
}

// withStore runs fn with the configured database opened as openStore
// opens it (never created), closing it after.
func withStore(cmd *cobra.Command, fn func(ctx context.Context, st *store.Store) error) error {
	ctx := cmd.Context()
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(ctx, st)
}
