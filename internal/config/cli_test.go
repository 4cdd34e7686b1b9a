package config

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildZhizhi builds the real binary once per test into a temp dir.
func buildZhizhi(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the zhizhi binary; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "zhizhi")
	out, err := exec.Command(gobin, "build", "-o", bin, "zhizhi/cmd/zhizhi").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type runResult struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, bin, dataDir string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ZHIZHI_DATA_DIR="+dataDir, "ZHIZHI_DATABASE_URL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return runResult{stdout.String(), stderr.String(), code}
}

// TestCLIEndToEnd runs the built binary the way an operator does: lint a
// broken directory, lint a clean one, import departments and sync twice.
func TestCLIEndToEnd(t *testing.T) {
	bin := buildZhizhi(t)
	data := t.TempDir()

	bad := run(t, bin, data, "config", "lint", "--dir", "testdata/lint_bad")
	if bad.code != 1 {
		t.Errorf("lint of lint_bad exited %d, want 1\n%s%s", bad.code, bad.stdout, bad.stderr)
	}
	lines := strings.Split(strings.TrimSpace(bad.stdout), "\n")
	if len(lines) != len(lintBadWant) {
		t.Errorf("lint printed %d lines, want %d:\n%s", len(lines), len(lintBadWant), bad.stdout)
	}
	for _, want := range []string{
		"testdata/lint_bad/sites/broken.yaml:4:1: malformed YAML",
		"testdata/lint_bad/sites/gd_ref.yaml:6:1: unknown key \"respect_robot\" in site — did you mean respect_robots?",
		"testdata/lint_bad/sites/gd_ref.yaml:28:19: dept_binding pending is a runtime state",
		"testdata/lint_bad/sites/qingxin.yaml:1:1: duplicate site_code \"qingcheng\"",
		"testdata/lint_bad/sites/empty_site.yaml:9:1: warning: ",
	} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("lint output lacks a line starting %q", want)
		}
	}
	if !strings.Contains(bad.stderr, "config lint: ") || !strings.Contains(bad.stderr, "error(s) in testdata/lint_bad") {
		t.Errorf("stderr = %q", bad.stderr)
	}

	good := run(t, bin, data, "config", "lint", "--dir", "testdata/lint_good")
	if good.code != 0 || good.stdout != "ok: 3 sites, 7 targets, 1 adapters\n" {
		t.Errorf("lint of lint_good: exit %d, stdout %q, stderr %q", good.code, good.stdout, good.stderr)
	}

	// Sync before the departments exist: refused, nothing written.
	refused := run(t, bin, data, "config", "sync", "--dir", "testdata/lint_good")
	if refused.code != 1 || !strings.Contains(refused.stderr, "local_dept_id 2101 is not in local_department") {
		t.Errorf("sync without departments: exit %d, stderr %q", refused.code, refused.stderr)
	}
	imp := run(t, bin, data, "dept", "import", "testdata/lint_good/departments.csv")
	if imp.code != 0 || !strings.Contains(imp.stdout, "2 created") {
		t.Errorf("dept import: exit %d, stdout %q, stderr %q", imp.code, imp.stdout, imp.stderr)
	}
	first := run(t, bin, data, "config", "sync", "--dir", "testdata/lint_good")
	if first.code != 0 || !strings.Contains(first.stdout, "targets: 7 created, 0 updated, 0 unchanged, 0 disabled") {
		t.Errorf("first sync: exit %d, stdout %q, stderr %q", first.code, first.stdout, first.stderr)
	}
	second := run(t, bin, data, "config", "sync", "--dir", "testdata/lint_good")
	for _, want := range []string{"sites:   0 created, 0 updated, 3 unchanged", "depts:   0 created, 0 updated, 4 unchanged",
		"targets: 0 created, 0 updated, 7 unchanged, 0 disabled"} {
		if second.code != 0 || !strings.Contains(second.stdout, want) {
			t.Errorf("second sync: exit %d, stdout %q lacks %q", second.code, second.stdout, want)
		}
	}
	mig := run(t, bin, data, "migrate")
	if mig.code != 0 || !strings.Contains(mig.stdout, "schema version") {
		t.Errorf("migrate: exit %d, stdout %q, stderr %q", mig.code, mig.stdout, mig.stderr)
	}
}
