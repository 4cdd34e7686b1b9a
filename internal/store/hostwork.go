package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync"
	"time"
)

// hostWorkSpace is the advisory lock space of TryLockHostWork, apart from
// the per-request host locks.
const hostWorkSpace = hostLockSpace + 1

// TryLockHostWork takes, without waiting, the lock that lets one crawl or
// re-check job at a time work a host, across every process on the
// database. Its requests are one at a time anyway (LockHost), so a second
// job on the same host would only wait for the first's turns while a
// worker could serve another host. ok is false when another job holds it.
//
// PostgreSQL: a session advisory lock on a connection of its own, keyed
// by schema and host (it orders one deployment's jobs; the per-request
// host lock, which keeps the politeness rules, is database-wide).
// SQLite: a non-blocking flock on <database file>.locks/<host>.work; the
// kernel drops both when their holder dies.
func (s *Store) TryLockHostWork(ctx context.Context, host string) (release func(), ok bool, err error) {
	if host == "" {
		return nil, false, fmt.Errorf("lock host work: empty host name")
	}
	if s.dialect == DialectPostgres {
		return s.tryLockHostWorkPostgres(ctx, host)
	}
	dir, err := s.hostLockDir(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock host work %s: %w", host, err)
	}
	name := filepath.Join(dir, lockFileName(host)[:len(lockFileName(host))-len(".lock")]+".work")
	release, ok, err = tryLockFile(name)
	if err != nil {
		return nil, false, fmt.Errorf("lock host work %s: %w", host, err)
	}
	return release, ok, nil
}

func (s *Store) tryLockHostWorkPostgres(ctx context.Context, host string) (func(), bool, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock host work %s: %w", host, err)
	}
	discard := func() {
		c.Raw(func(any) error { return driver.ErrBadConn })
		c.Close()
	}
	var got bool
	if err := c.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, hashtext(current_schema() || ' ' || $2))`, hostWorkSpace, host).Scan(&got); err != nil {
		discard()
		return nil, false, fmt.Errorf("lock host work %s: %w", host, err)
	}
	if !got {
		c.Close()
		return nil, false, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var ok bool
			if err := c.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1, hashtext(current_schema() || ' ' || $2))`, hostWorkSpace, host).Scan(&ok); err != nil || !ok {
				discard()
				return
			}
			c.Close()
		})
	}, true, nil
}
