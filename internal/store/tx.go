package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Tx is a transaction handed to the function given to WithTx. Its methods
// are the writes that must happen together (config sync).
type Tx struct {
	c conn
	s *Store
}

// WithTx runs fn in one transaction: committed when fn returns nil, rolled
// back when it returns an error (or panics).
func (s *Store) WithTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = sqlTx.Rollback()
		}
	}()
	if err := fn(&Tx{c: conn{r: sqlTx, s: s}, s: s}); err != nil {
		return err
	}
	done = true
	if err := sqlTx.Commit(); err != nil {
		_ = sqlTx.Rollback()
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// notFound maps sql.ErrNoRows to ErrNotFound, keeping other errors.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
