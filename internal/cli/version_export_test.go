package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/store"
)

// TestVersionFlag: `zhizhi --version` works, as users of any command-line
// tool expect, and says exactly what `zhizhi version` says.
func TestVersionFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	env := []string{"ZHIZHI_DATA_DIR=" + t.TempDir()}
	flag := runZhizhi(t, env, "--version")
	cmd := runZhizhi(t, env, "version")
	if flag.code != 0 || cmd.code != 0 {
		t.Fatalf("--version exit %d (%s), version exit %d (%s)", flag.code, flag.stderr, cmd.code, cmd.stderr)
	}
	if !strings.HasPrefix(cmd.stdout, "zhizhi ") || flag.stdout != cmd.stdout {
		t.Errorf("zhizhi --version printed %q, zhizhi version %q; want the same line, starting with \"zhizhi \"", flag.stdout, cmd.stdout)
	}
}

// TestExportSinceGarbage: a mistyped cursor is a usage error (exit 2) whose
// message names the flag, the value and what a cursor is, and nothing is
// written: no output, not even a database.
func TestExportSinceGarbage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	data := filepath.Join(t.TempDir(), "data")
	r := runZhizhi(t, []string{"ZHIZHI_DATA_DIR=" + data}, "export", "--since", "garbage")
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (usage error)\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{`--since "garbage"`, "next cursor:", "leave --since out"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if m := regexp.MustCompile(`like (\S+)\)`).FindStringSubmatch(r.stderr); m == nil || !store.ValidExportCursor(m[1]) {
		t.Errorf("the message shows no valid cursor as an example: %v", m)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
		t.Errorf("want one line on stderr and nothing on stdout; stdout %q stderr %q", r.stdout, r.stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused export created the data directory %s (%v)", data, err)
	}
}
