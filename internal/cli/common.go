package cli

import (
	"context"

	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// openStore opens the configured database (applying migrations) or returns
// an exit error carrying the store's readable message.
func openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, databaseURL(), settings.DataDir)
	if err != nil {
		return nil, exitCode(1, err.Error())
	}
	// The job queue's tables are migrated with zhizhi's own.
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, exitCode(1, "open database: "+err.Error())
	}
	return st, nil
}
