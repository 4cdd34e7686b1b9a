package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// brokenDetailConfig is a copy of the bundled configuration whose lianzhou
// detail template looks for a body element the pages do not have, as after
// a site redesign: every article of the site fails.
func brokenDetailConfig(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "config")
	copyDir(t, bundledConfig, dir)
	lz := filepath.Join(dir, "sites", "lianzhou.yaml")
	b, err := os.ReadFile(lz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`body: "div#zoom"`)) {
		t.Fatal("lianzhou.yaml has no detail body selector to break")
	}
	if err := os.WriteFile(lz, bytes.Replace(b, []byte(`body: "div#zoom"`), []byte(`body: "div#redesigned"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCrawlExitStatus: cron sees a broken template (exit 1, the target
// named), a clean crawl exits 0 — a column robots.txt forbids included —
// and a wrong call or a broken configuration exits 2.
func TestCrawlExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and crawls the simulated web at polite rates")
	}
	waitBound(t)

	t.Run("every article failing exits 1 and names the target", func(t *testing.T) {
		waitBound(t)
		db := newCrawledDB(t, false)
		env := append(slices.Clone(db.env), "ZHIZHI_CONFIG_DIR="+brokenDetailConfig(t))
		r := runZhizhi(t, env, "crawl", "--target", "lianzhou_rsxx")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1 (every article failed)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "lianzhou_rsxx") {
			t.Errorf("stderr does not name the failed target:\n%s", r.stderr)
		}
		if !strings.Contains(r.stdout, "⚠ lianzhou_rsxx:") {
			t.Errorf("the table does not list the target's failed articles:\n%s", r.stdout)
		}
	})

	t.Run("a clean crawl exits 0", func(t *testing.T) {
		waitBound(t)
		db := newCrawledDB(t, false)
		r := runZhizhi(t, db.env, "crawl", "--target", "lianzhou_rsxx")
		if r.code != 0 || !strings.Contains(r.stdout, "✓ 成功") {
			t.Fatalf("exit %d, want 0 and the target green\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("a column robots.txt forbids is not a failure", func(t *testing.T) {
		waitBound(t)
		db := newCrawledDB(t, false)
		r := runZhizhi(t, db.env, "crawl", "--target", "gd_ref_rsrm")
		if r.code != 0 || !strings.Contains(r.stdout, "⛔ robots 禁止") {
			t.Fatalf("exit %d, want 0 with the column shown as forbidden\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("usage and configuration errors exit 2", func(t *testing.T) {
		db := newCrawledDB(t, false)
		broken := filepath.Join(t.TempDir(), "config")
		copyDir(t, bundledConfig, broken)
		if err := os.WriteFile(filepath.Join(broken, "sites", "lianzhou.yaml"), []byte("site_code: [unclosed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			env  []string
			args []string
			want string
		}{
			{"no selection", nil, []string{"crawl"}, "exactly one of"},
			{"unknown flag", nil, []string{"crawl", "--every"}, "--every"},
			{"stray argument", nil, []string{"crawl", "--all", "now"}, `"now"`},
			{"unknown target", nil, []string{"crawl", "--target", "no_such_target"}, `"no_such_target"`},
			{"broken configuration", []string{"ZHIZHI_CONFIG_DIR=" + broken}, []string{"crawl", "--all"}, "lianzhou.yaml"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := runZhizhi(t, append(slices.Clone(db.env), c.env...), c.args...)
				if r.code != 2 || !strings.Contains(r.stderr, c.want) {
					t.Errorf("exit %d, stderr %q; want exit 2 naming %s", r.code, r.stderr, c.want)
				}
			})
		}
	})
}

// startZhizhi starts the binary in a process group of its own, as a
// terminal starts a foreground job, and returns it with a channel that gets
// its result when it exits.
func startZhizhi(t *testing.T, env []string, args ...string) (*exec.Cmd, <-chan runResult) {
	t.Helper()
	cmd := exec.Command(zhizhiBinary(t), args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") }), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan runResult, 1)
	go func() {
		err := cmd.Wait()
		r := runResult{stdout: stdout.String(), stderr: stderr.String(), code: -1}
		var ee *exec.ExitError
		if err == nil {
			r.code = 0
		} else if errors.As(err, &ee) {
			r.code = ee.ExitCode() // -1 when a signal killed it
		}
		done <- r
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return cmd, done
}

// waitExit waits for the process to end on its own; a process still
// running at the test's generous deadline is killed and fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, done <-chan runResult, what string) runResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		r := <-done
		t.Fatalf("zhizhi still running a minute after %s; killed\nstdout:\n%s\nstderr:\n%s", what, r.stdout, r.stderr)
		return r
	}
}

// chromiumProfileOf returns the --user-data-dir of a Chromium that pid
// started, or "" while it has none.
func chromiumProfileOf(pid int) string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces; ppid follows it.
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if dir, ok := bytes.CutPrefix(arg, []byte("--user-data-dir=")); ok {
				return string(dir)
			}
		}
	}
	return ""
}

// processesNaming counts the processes whose command line names dir.
func processesNaming(dir string) int {
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(dir)) {
			n++
		}
	}
	return n
}

// TestCrawlInterruptedByCtrlC is a Ctrl-C in the middle of `zhizhi crawl
// --all`, with the browser running and requests in flight on slow sites:
// the signal goes to zhizhi's whole process group, as a terminal sends
// it. zhizhi exits 130 on its own, prints the table so far with the
// targets it did not finish marked interrupted, and leaves neither a
// Chromium process nor a profile directory behind.
func TestCrawlInterruptedByCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs Chromium")
	}
	waitBound(t)
	if !crawltest.Chromium(t) {
		t.Skip("needs Chromium")
	}
	db := newCrawledDB(t, false)
	for _, host := range []string{"www.lianzhou.gov.test", "www.yingde.gov.test"} {
		if err := db.world.Sim.SetFault(host, sim.Fault{Kind: sim.FaultSlow, PathPrefix: "/", BytesPerSec: 100}); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	env := append(slices.Clone(db.env), "ZHIZHI_CHROMIUM=/usr/bin/chromium", "TMPDIR="+tmp)
	cmd, done := startZhizhi(t, env, "crawl", "--all")

	// The city portal's cookie challenge starts Chromium.
	var profile string
	for profile == "" {
		select {
		case r := <-done:
			t.Fatalf("crawl ended (exit %d) before Chromium started\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		case <-time.After(100 * time.Millisecond):
			profile = chromiumProfileOf(cmd.Process.Pid)
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, cmd, done, "Ctrl-C")
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)

	if r.code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130\nstderr:\n%s", r.code, r.stderr)
	}
	for _, s := range []string{"栏目 target", "合计 total", "⏸ 已中断"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("the summary so far does not show %q:\n%s", s, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr does not say the crawl was interrupted:\n%s", r.stderr)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("Chromium profile %s left behind (stat: %v)", profile, err)
	}
	if n := processesNaming(profile); n > 0 {
		t.Errorf("%d Chromium processes of the interrupted crawl still run", n)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "zhizhi-chromium-*")); len(left) > 0 {
		t.Errorf("profile directories left in TMPDIR: %v", left)
	}
}

// TestCrawlSIGTERMAbandonsHungRequest: SIGTERM while a request hangs at
// the site. zhizhi waits a bounded time for it, then abandons it (the
// request log says canceled, not timed out) and exits 130 with its table.
func TestCrawlSIGTERMAbandonsHungRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and crawls the simulated web")
	}
	waitBound(t)
	db := newCrawledDB(t, false)
	const host = "www.lianzhou.gov.test"
	// The first article page asked for never answers.
	if err := db.world.Sim.SetFault(host, sim.Fault{Kind: sim.FaultHang, PathPrefix: "/tzgg/2", Count: 1}); err != nil {
		t.Fatal(err)
	}
	cmd, done := startZhizhi(t, db.env, "crawl", "--target", "lianzhou_tzgg")

	// A counted fault leaves the list when a request takes it: the hung
	// request has arrived.
	for len(db.world.Sim.Faults()[host]) > 0 {
		select {
		case r := <-done:
			t.Fatalf("crawl ended (exit %d) before it asked for an article\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, cmd, done, "SIGTERM")

	if r.code != 130 {
		t.Errorf("exit %d after SIGTERM, want 130\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "lianzhou_tzgg") || !strings.Contains(r.stdout, "⏸ 已中断") {
		t.Errorf("the table does not show the target interrupted:\n%s", r.stdout)
	}
	logs, err := db.st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: host, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var hung []string
	for _, l := range logs {
		if strings.Contains(l.ArticleURL, "/tzgg/2") && !l.Success {
			hung = append(hung, fmt.Sprintf("%s %s", l.ArticleURL, l.ErrorClass))
			if l.ErrorClass != fetch.ClassCanceled {
				t.Errorf("the hung request %s ended as %q, want %q: abandoned by zhizhi, not given up by timeout", l.ArticleURL, l.ErrorClass, fetch.ClassCanceled)
			}
		}
	}
	if len(hung) != 1 {
		t.Errorf("crawl_log has %d failed article requests, want the one hung request: %v", len(hung), hung)
	}
}
