package browser

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A profile directory is named <temp dir>/zhizhi-chromium-<owner pid>-<random>
// and holds a lock file that the owning zhizhi process keeps flock'ed for the
// life of its browser. The kernel drops the lock when the owner dies however
// it dies (SIGKILL, OOM, power cut of the process), so a later start can tell
// a leftover from a directory in use even when the owner's PID has since been
// given to another process.
const (
	profilePrefix = "zhizhi-chromium-"
	profileLock   = "zhizhi.lock"
	// legacyAge spares a directory named the old way (no owner PID) that
	// an older zhizhi has just created and not yet handed to Chromium.
	legacyAge = time.Minute
)

// profile is a profile directory and the lock that marks it as in use.
type profile struct {
	dir  string
	lock *os.File
}

// newProfile creates a profile directory under tmp and locks it. The
// directory is made under a hidden name and renamed once locked: a
// sweeping zhizhi never sees it unlocked while its owner lives.
func newProfile(tmp string) (*profile, error) {
	staging, err := os.MkdirTemp(tmp, "."+profilePrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(staging, profileLock), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	dir := filepath.Join(tmp, strings.TrimPrefix(filepath.Base(staging), "."))
	if err == nil {
		err = os.Rename(staging, dir)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(staging)
		return nil, err
	}
	return &profile{dir: dir, lock: lock}, nil
}

// release drops the lock; call it once the directory is gone.
func (p *profile) release() { p.lock.Close() }

// removeStaleProfiles removes the profile directories under tmp whose owner
// is gone, killing what is left of their Chromium first. A directory whose
// owner still runs is kept, and so is anything not named like a profile.
func removeStaleProfiles(tmp string, log *slog.Logger) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	var cmdlines [][]byte // read once, only when there is a candidate
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), profilePrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if cmdlines == nil {
			cmdlines = processCmdlines()
		}
		stale, unlock := profileStale(dir, cmdlines)
		if !stale {
			continue
		}
		if mentioned(cmdlines, dir) {
			cleanUp(dir, log) // a dead owner's Chromium children, ours to end
		} else if err := os.RemoveAll(dir); err != nil {
			log.Warn("remove stale chromium profile", "dir", dir, "error", err)
		}
		unlock()
		log.Info("removed chromium profile of a zhizhi that is gone", "dir", dir)
	}
}

// profileStale decides whether dir's owner is gone. When it is, the caller
// holds dir's lock until unlock, so no second sweeper races it.
func profileStale(dir string, cmdlines [][]byte) (stale bool, unlock func()) {
	nop := func() {}
	pidText, _, named := strings.Cut(strings.TrimPrefix(filepath.Base(dir), profilePrefix), "-")
	pid, err := strconv.Atoi(pidText)
	if !named || err != nil || pid <= 0 {
		// Named by a zhizhi that did not lock its profile: stale once no
		// process uses it and it is not brand new.
		fi, err := os.Stat(dir)
		return err == nil && time.Since(fi.ModTime()) > legacyAge && !mentioned(cmdlines, dir), nop
	}
	lock, err := os.OpenFile(filepath.Join(dir, profileLock), os.O_RDWR, 0)
	if err != nil {
		// No lock file: only a dead owner makes it stale.
		return errors.Is(err, os.ErrNotExist) && !alive(pid), nop
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return false, nop // the owner holds it: in use
	}
	// Nobody holds the lock: the owner is gone, whoever has its PID now.
	return true, func() { lock.Close() }
}

// alive reports whether a process with pid exists (a zombie counts).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processCmdlines returns the command line of every process but this one.
func processCmdlines() [][]byte {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return [][]byte{}
	}
	self := strconv.Itoa(os.Getpid())
	out := [][]byte{}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

func mentioned(cmdlines [][]byte, dir string) bool {
	for _, c := range cmdlines {
		if mentions(c, dir) {
			return true
		}
	}
	return false
}

// mentions reports whether a NUL-separated command line names dir or a
// path inside it. The random part of a profile name varies in length, so
// dir may be a string prefix of another profile that is none of its
// business.
func mentions(cmdline []byte, dir string) bool {
	for rest := cmdline; ; {
		i := bytes.Index(rest, []byte(dir))
		if i < 0 {
			return false
		}
		rest = rest[i+len(dir):]
		if len(rest) == 0 || rest[0] == 0 || rest[0] == '/' {
			return true
		}
	}
}
