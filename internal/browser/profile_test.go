package browser

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownerEnv makes the test binary a profile owner: it starts a Browser,
// prints its profile directory and waits to be killed.
const ownerEnv = "ZHIZHI_TEST_PROFILE_OWNER"

func TestProfileOwnerProcess(t *testing.T) {
	if os.Getenv(ownerEnv) == "" {
		t.Skip("run as a child by TestStaleProfilesRemovedAtStart")
	}
	b, err := New(context.Background(), Options{UAToken: testUAToken})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("dir:", b.dir)
	select {}
}

// startOwner runs a real zhizhi-like process that owns a running Chromium
// and its profile directory; it returns the process and the directory.
func startOwner(t *testing.T, tmp string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestProfileOwnerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), ownerEnv+"=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		// The owner's Chromium children outlive a SIGKILL for a moment and
		// keep writing into the profile; end them and remove it as the next
		// start would, or the temp directory's own removal races them.
		if dir != "" {
			cleanUp(dir, testLogger())
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "dir: "); ok {
			dir = d
			return cmd, dir
		}
		if strings.HasPrefix(sc.Text(), "error:") {
			t.Fatalf("owner process: %s", sc.Text())
		}
	}
	t.Fatalf("owner process ended without naming its profile: %v", sc.Err())
	return nil, ""
}

// TestStaleProfilesRemovedAtStart: a zhizhi killed outright (SIGKILL: no
// chance to clean up) leaves its Chromium profile directory; the next
// browser start removes it and ends whatever Chromium process still uses
// it, but keeps the profile of a zhizhi that is still running, and removes
// a profile whose owner's PID now belongs to another process.
func TestStaleProfilesRemovedAtStart(t *testing.T) {
	needChromium(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	dead, deadDir := startOwner(t, tmp)
	_, liveDir := startOwner(t, tmp)
	if _, err := os.Stat(deadDir); err != nil {
		t.Fatalf("a second zhizhi's start removed the profile of a running one: %v", err)
	}
	if err := dead.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = dead.Wait()
	if _, err := os.Stat(deadDir); err != nil {
		t.Fatalf("the killed owner's profile is gone before any new start (%v): nothing to test", err)
	}

	// A profile named after a live process (this test) that holds no lock:
	// its owner died and the PID was given to someone else.
	reused := filepath.Join(tmp, fmt.Sprintf("zhizhi-chromium-%d-42", os.Getpid()))
	if err := os.MkdirAll(filepath.Join(reused, "Default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reused, "zhizhi.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Not a profile at all: never touched.
	other := filepath.Join(tmp, "zhizhi-chromium-notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}

	b, err := New(t.Context(), Options{UAToken: testUAToken, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("profile %s of the killed zhizhi is still there after the next start (stat: %v)", deadDir, err)
	}
	if n := countChromium(deadDir); n > 0 {
		t.Errorf("%d processes of the killed zhizhi's Chromium still run", n)
	}
	if _, err := os.Stat(reused); !os.IsNotExist(err) {
		t.Errorf("profile %s, unlocked under a reused PID, is still there (stat: %v)", reused, err)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("profile %s of the running zhizhi was removed: %v", liveDir, err)
	}
	if countChromium(liveDir) == 0 {
		t.Errorf("the running zhizhi's Chromium was killed")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a profile was removed: %v", err)
	}
	if _, err := os.Stat(b.dir); err != nil {
		t.Errorf("the new browser's own profile: %v", err)
	}
}
