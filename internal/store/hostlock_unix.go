//go:build unix

package store

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path, waiting until it is free or
// ctx ends. flock belongs to the open file, so two opens in one process
// exclude each other just as two processes do.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		return func() { f.Close() }, nil
	}
	// Busy: wait in a blocking flock, which wakes as soon as the holder
	// lets go. If ctx ends first, the waiter's lock is dropped whenever
	// it arrives (closing the file releases it).
	done := make(chan error, 1)
	go func() {
		var err error
		for {
			err = syscall.Flock(fd, syscall.LOCK_EX)
			if err != syscall.EINTR {
				break
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return nil, ctx.Err()
	}
}

// tryLockFile takes an exclusive flock on path if it is free; ok is false
// when another open file holds it.
func tryLockFile(path string) (release func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("flock %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}
