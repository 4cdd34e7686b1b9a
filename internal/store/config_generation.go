package store

import (
	"context"
	"fmt"
)

// ConfigGeneration returns how many times the configuration has been
// synced: a long-running process that loaded an older generation has files
// to read again. One indexed row, cheap enough to ask before every job.
func (s *Store) ConfigGeneration(ctx context.Context) (int64, error) {
	var g int64
	if err := s.conn().queryRow(ctx, `SELECT generation FROM config_generation WHERE id = 1`).Scan(&g); err != nil {
		return 0, fmt.Errorf("config generation: %w", notFound(err))
	}
	return g, nil
}

// BumpConfigGeneration counts one more sync, in the sync's own
// transaction, so a process that sees the new generation also sees every
// row the sync wrote. It returns the new generation.
func (tx *Tx) BumpConfigGeneration(ctx context.Context) (int64, error) {
	var g int64
	err := tx.c.queryRow(ctx, `UPDATE config_generation SET generation = generation + 1, synced_at = ?
		WHERE id = 1 RETURNING generation`, tx.s.ts(tx.s.now())).Scan(&g)
	if err != nil {
		return 0, fmt.Errorf("count config sync: %w", notFound(err))
	}
	return g, nil
}
