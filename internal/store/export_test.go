package store

import (
	"context"
	"time"
)

// Exec runs raw SQL written with ? placeholders, for the schema tests that
// must bypass the typed methods to prove the database itself refuses a row.
func Exec(ctx context.Context, s *Store, query string, args ...any) error {
	_, err := s.conn().exec(ctx, query, args...)
	return err
}

// TS converts a time the way the store writes timestamps.
func TS(s *Store, t time.Time) any { return s.ts(t) }

// AfterBlobScan makes gc run f between its scan of the blob table and its
// deletes, where a crawl's Put can slip in.
func AfterBlobScan(s *Store, f func()) { s.afterBlobScan = f }
