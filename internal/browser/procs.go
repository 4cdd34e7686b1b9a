package browser

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// killProcessesUsing SIGKILLs every process whose command line mentions
// dir, until a few scans in a row find none.
//
// Killing Chromium's main process does not always take its zygote, GPU and
// network-service children with it, and a child forked just before the kill
// shows up only on a later scan. Every Chromium child gets
// --user-data-dir=dir and the crash handler gets a database path inside dir;
// dir is a fresh random temp directory, so the command line identifies
// exactly our processes — never another Chromium on the machine.
func killProcessesUsing(dir string) {
	const (
		quietScans = 3
		pause      = 20 * time.Millisecond
		limit      = 5 * time.Second
	)
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < quietScans && time.Now().Before(deadline); {
		pids := processesUsing(dir)
		if len(pids) == 0 {
			quiet++
		} else {
			quiet = 0
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(pause)
	}
}

// processesUsing lists the live processes with dir in their command line.
// Zombies are skipped (their command line is empty): they hold nothing and
// get reaped by whoever inherited them. On systems without /proc it finds
// nothing.
func processesUsing(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		if mentions(cmdline, dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cleanUp kills what is left of the browser and removes its profile
// directory, then looks again: a child caught mid-shutdown can recreate
// files in the directory after it was removed.
func cleanUp(dir string, log *slog.Logger) {
	var err error
	for range 3 {
		killProcessesUsing(dir)
		err = removeAllRetry(dir)
		time.Sleep(100 * time.Millisecond)
		if _, statErr := os.Stat(dir); os.IsNotExist(statErr) && len(processesUsing(dir)) == 0 {
			return
		}
	}
	log.Warn("chromium profile left behind", "dir", dir, "error", err)
}

// removeAllRetry removes the profile directory, retrying briefly because a
// dying Chromium child may still be writing into it.
func removeAllRetry(dir string) error {
	var err error
	for range 10 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
