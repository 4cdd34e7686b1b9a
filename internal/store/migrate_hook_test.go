package store

import "context"

// MigrateTo moves the schema up or down to version v, for tests of a
// migration's data handling.
func MigrateTo(ctx context.Context, s *Store, v int64) error {
	p, err := s.migrationProvider()
	if err != nil {
		return err
	}
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if cur > v {
		_, err = p.DownTo(ctx, v)
	} else {
		_, err = p.UpTo(ctx, v)
	}
	return err
}
