package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// hostLockSpace is the first key of zhizhi's two-key PostgreSQL advisory
// locks ("zhzh"), so they cannot meet another application's locks (or
// goose's single-key migration lock) on a shared server.
const hostLockSpace int32 = 0x7a687a68

// LockHost takes the cross-process lock of host and returns its release.
// Every process that shares this database (any number of zhizhi fetch,
// crawl or serve runs) takes it around each request to host, so that the
// site never has two of zhizhi's requests in flight at once, and reads and
// writes the host's token bucket under it. It waits until the lock is free
// or ctx ends.
//
// PostgreSQL: a session-level advisory lock on a connection of its own,
// released (or the connection discarded) by release. SQLite: an exclusive
// flock on <database file>.locks/<host>.lock, keyed to the database file
// (not the data directory, which two processes on one file may not share),
// which the kernel drops if the process dies.
func (s *Store) LockHost(ctx context.Context, host string) (release func(), err error) {
	if host == "" {
		return nil, fmt.Errorf("lock host: empty host name")
	}
	if s.dialect == DialectPostgres {
		return s.lockHostPostgres(ctx, host)
	}
	dir, err := s.hostLockDir(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock host %s: %w", host, err)
	}
	release, err = lockFile(ctx, filepath.Join(dir, lockFileName(host)))
	if err != nil {
		return nil, fmt.Errorf("lock host %s: %w", host, err)
	}
	return release, nil
}

func (s *Store) lockHostPostgres(ctx context.Context, host string) (func(), error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock host %s: %w", host, err)
	}
	// discard ends the session, which frees whatever it holds: used when
	// we cannot be sure whether the lock was taken (a cancelled wait may
	// race with the grant) or released.
	discard := func() {
		c.Raw(func(any) error { return driver.ErrBadConn })
		c.Close()
	}
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, hostLockSpace, host); err != nil {
		discard()
		return nil, fmt.Errorf("lock host %s: %w", host, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var ok bool
			err := c.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, hostLockSpace, host).Scan(&ok)
			if err != nil || !ok {
				discard()
				return
			}
			c.Close()
		})
	}, nil
}

// hostLockDir returns (and creates) the directory of SQLite host locks. It
// is named after the database file, by its real path, and sits beside it:
// every process that opens that file meets the same locks, whatever its
// data directory and however it spells the path. Only a database with no
// file (in memory) falls back to the data directory.
func (s *Store) hostLockDir(ctx context.Context) (string, error) {
	s.lockDirOnce.Do(func() {
		var file string
		if err := s.db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
			s.lockDirErr = fmt.Errorf("find the database file for host locks: %w", err)
			return
		}
		var dir string
		switch {
		case file != "":
			real, err := filepath.EvalSymlinks(file)
			if err != nil {
				s.lockDirErr = fmt.Errorf("find the database file for host locks: %w", err)
				return
			}
			if real, err = filepath.Abs(real); err != nil {
				s.lockDirErr = fmt.Errorf("find the database file for host locks: %w", err)
				return
			}
			dir = real + ".locks"
		case s.dataDir != "":
			dir = filepath.Join(s.dataDir, "locks")
		default:
			s.lockDirErr = errors.New("the SQLite database has no file and no data directory is set: host locks need one — set ZHIZHI_DATA_DIR")
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.lockDirErr = fmt.Errorf("create host lock directory: %w", err)
			return
		}
		s.lockDir = dir
	})
	return s.lockDir, s.lockDirErr
}

// lockFileName makes a host name safe as a file name. Distinct hosts that
// map to one name share a lock, which is only stricter.
func lockFileName(host string) string {
	b := []byte(strings.ToLower(host))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	name := string(b)
	if strings.HasPrefix(name, ".") {
		name = "_" + name
	}
	return name + ".lock"
}
