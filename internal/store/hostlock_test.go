package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestLockHost: one holder per host at a time (each LockHost is its own
// connection or open file, as another process's would be); other hosts
// are free; a waiter gives up with its context; a
// released lock can be taken again.
func TestLockHost(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		release, err := s.LockHost(ctx, "www.gd.gov.test")
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.LockHost(ctx, "www.gz.gov.test")
		if err != nil {
			t.Fatalf("another host: %v", err)
		}
		other()

		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if r, err := s.LockHost(tctx, "www.gd.gov.test"); !errors.Is(err, context.DeadlineExceeded) {
			if r != nil {
				r()
			}
			t.Fatalf("second lock of a held host: %v, want to wait until the context ends", err)
		}

		got := make(chan func(), 1)
		go func() {
			r, err := s.LockHost(ctx, "www.gd.gov.test")
			if err != nil {
				t.Error(err)
				r = func() {}
			}
			got <- r
		}()
		select {
		case r := <-got:
			r()
			t.Fatal("the lock was taken twice")
		case <-time.After(50 * time.Millisecond):
		}
		release()
		// The waiter wakes on the release itself; the bound only turns a
		// lost wake-up into a failure rather than a hung run, so it is
		// generous for a busy shared PostgreSQL server.
		select {
		case r := <-got:
			r()
		case <-time.After(2 * time.Minute):
			t.Fatal("the waiter did not get the lock after its release")
		}
	})
}

// TestHostStateParts: health, robots.txt and the bucket are written by
// different processes at different times; writing one part leaves the
// others as they were. Clearing a host forgets a failed robots.txt of any
// of its origins, never a file that was read.
func TestHostStateParts(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const host = "www.gd.gov.test"
		at := time.Date(2026, 3, 5, 8, 0, 0, 123456000, time.UTC)
		if _, _, ok, err := s.GetHostBucket(ctx, host); ok || err != nil {
			t.Fatalf("bucket of a host never seen: ok=%v err=%v", ok, err)
		}
		if err := s.PutHostBucket(ctx, host, 1.5, at); err != nil {
			t.Fatal(err)
		}
		until := at.Add(time.Hour)
		if err := s.PutHostHealth(ctx, &model.HostState{Host: host, ConsecutiveErrors: 2, BreakerUntil: &until,
			NeedsReview: true, BlockReason: "captcha"}); err != nil {
			t.Fatal(err)
		}
		read := model.RobotsState{Origin: "http://" + host + ":80", Host: host, Status: 200, Body: []byte("User-agent: *\n"),
			FetchedAt: at, ETag: `"r1"`, LastModified: "Thu, 05 Mar 2026 08:00:00 GMT"}
		failed := model.RobotsState{Origin: "https://" + host + ":443", Host: host, FetchedAt: at,
			Failures: 3, FailingSince: &at, LastError: "connection refused"}
		for _, r := range []*model.RobotsState{&read, &failed} {
			if err := s.PutRobotsState(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		tokens, bat, ok, err := s.GetHostBucket(ctx, host)
		if err != nil || !ok || tokens != 1.5 || !bat.Equal(at) {
			t.Fatalf("bucket %v at %v (ok %v, %v), want 1.5 at %v", tokens, bat, ok, err, at)
		}
		st, err := s.GetHostState(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		if st.ConsecutiveErrors != 2 || st.BreakerUntil == nil || !st.BreakerUntil.Equal(until) || !st.NeedsReview ||
			st.BlockReason != "captcha" || st.BucketTokens != 1.5 || st.BucketAt == nil {
			t.Fatalf("host state after three partial writes: %+v", st)
		}
		// A health write from a process that read the row before the
		// block was recorded does not undo it.
		if err := s.PutHostHealth(ctx, &model.HostState{Host: host, ConsecutiveErrors: 0}); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.GetHostState(ctx, host); st.BlockReason != "captcha" || !st.NeedsReview || st.ConsecutiveErrors != 0 {
			t.Fatalf("a stale health write cleared the block: %+v", st)
		}
		if err := s.ClearHostBlock(ctx, host); err != nil {
			t.Fatal(err)
		}
		st, _ = s.GetHostState(ctx, host)
		if st.BlockReason != "" || st.NeedsReview || st.BreakerUntil != nil || st.BucketTokens != 1.5 {
			t.Errorf("after ClearHostBlock: %+v", st)
		}
		if r, err := s.GetRobotsState(ctx, read.Origin); err != nil || r.ETag != `"r1"` || string(r.Body) != "User-agent: *\n" {
			t.Errorf("after ClearHostBlock the robots.txt that was read is %+v (%v), want it kept", r, err)
		}
		if r, err := s.GetRobotsState(ctx, failed.Origin); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after ClearHostBlock the failed robots.txt is %+v (%v), want it forgotten", r, err)
		}
		if err := s.ClearHostBlock(ctx, "www.unknown.gov.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("clear an unknown host: %v, want ErrNotFound", err)
		}
	})
}

// TestHostLockFollowsTheDatabase: two processes on one SQLite file share
// each host's lock, even when their data directories differ or they name
// the file by another path (a symlink): holding it in one makes the other
// wait until it is released.
func TestHostLockFollowsTheDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "db", "zhizhi.db")
	open := func(dsnPath, dataDir string) *store.Store {
		s, err := store.Open(ctx, "sqlite://"+dsnPath, dataDir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := open(db, filepath.Join(dir, "data-a"))
	link := filepath.Join(dir, "elsewhere.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	others := map[string]*store.Store{
		"another data dir":           open(db, filepath.Join(dir, "data-b")),
		"no data dir":                open(db, ""),
		"a symlink and its data dir": open(link, filepath.Join(dir, "data-c")),
	}
	const host = "www.gd.gov.test"
	for name, b := range others {
		t.Run(name, func(t *testing.T) {
			release, err := a.LockHost(ctx, host)
			if err != nil {
				t.Fatal(err)
			}
			tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if r, err := b.LockHost(tctx, host); !errors.Is(err, context.DeadlineExceeded) {
				if r != nil {
					r()
				}
				release()
				t.Fatalf("lock of a host held through the same database: %v, want to wait until the context ends", err)
			}
			got := make(chan func(), 1)
			go func() {
				r, err := b.LockHost(ctx, host)
				if err != nil {
					t.Error(err)
					r = func() {}
				}
				got <- r
			}()
			release()
			select {
			case r := <-got:
				r()
			case <-time.After(5 * time.Second):
				t.Fatal("the waiter did not get the lock after its release")
			}
		})
	}
}
