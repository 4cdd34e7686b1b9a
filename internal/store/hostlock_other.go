//go:build !unix

package store

import (
	"context"
	"errors"
)

// lockFile has no portable cross-process lock on this system: refuse,
// rather than let two processes ask one host at once.
func lockFile(ctx context.Context, path string) (func(), error) {
	return nil, errors.New("cross-process host locks need a unix system; use PostgreSQL")
}

// tryLockFile: see lockFile.
func tryLockFile(path string) (func(), bool, error) {
	return nil, false, errors.New("cross-process host locks need a unix system; use PostgreSQL")
}
