package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// One job at a time works a host, across processes on one database: a
// second store cannot take the host's work lock while the first holds it,
// may once it is released, and another host is free all along; the
// per-request host lock is a different lock.
func TestTryLockHostWork(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			dsn := "sqlite://" + filepath.Join(t.TempDir(), "zhizhi.db")
			if dialect == store.DialectPostgres {
				dsn = storetest.PostgresURL(t)
			}
			open := func() *store.Store {
				s, err := store.Open(ctx, dsn, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			a, b := open(), open()
			const host = "www.gd.gov.test"
			release, ok, err := a.TryLockHostWork(ctx, host)
			if err != nil || !ok {
				t.Fatalf("first lock: ok %v, err %v", ok, err)
			}
			if r, ok, err := b.TryLockHostWork(ctx, host); err != nil || ok {
				if ok {
					r()
				}
				t.Fatalf("second process took a host's work lock that is held: ok %v, err %v", ok, err)
			}
			if r, ok, err := a.TryLockHostWork(ctx, host); err != nil || ok {
				if ok {
					r()
				}
				t.Fatalf("a second job of the same process took a host's work lock that is held: ok %v, err %v", ok, err)
			}
			other, ok, err := b.TryLockHostWork(ctx, "www.yingde.gov.test")
			if err != nil || !ok {
				t.Fatalf("another host's work lock: ok %v, err %v", ok, err)
			}
			other()
			req, err := b.LockHost(ctx, host)
			if err != nil {
				t.Fatalf("the request lock is apart from the work lock: %v", err)
			}
			req()
			release()
			again, ok, err := b.TryLockHostWork(ctx, host)
			if err != nil || !ok {
				t.Fatalf("after release: ok %v, err %v", ok, err)
			}
			again()
		})
	}
}
