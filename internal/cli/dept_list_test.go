package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportedDepartmentIsUsable: the database is where departments live.
// A department brought in with `dept import` but absent from
// config/departments.csv is usable by a target in YAML: lint and sync
// accept it, and `dept list` shows it.
func TestImportedDepartmentIsUsable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	copyDir(t, bundledConfig, dir)
	csvPath := filepath.Join(dir, "departments.csv")
	raw, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var header, gone string
	for i, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		switch {
		case i == 0:
			header = line
			kept = append(kept, line)
		case strings.HasPrefix(line, "2403,"):
			gone = line
		default:
			kept = append(kept, line)
		}
	}
	if gone == "" {
		t.Fatal("the bundled departments.csv has no department 2403")
	}
	if err := os.WriteFile(csvPath, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	base := []string{"--config-dir", dir, "--data-dir", data}
	run := func(args ...string) (string, int) {
		out, err := runInProcess(append(base, args...)...)
		var ee *exitError
		switch {
		case err == nil:
			return out, 0
		case errors.As(err, &ee):
			return out + ee.Error(), ee.code
		}
		t.Fatalf("%v: %v", args, err)
		return "", 0
	}

	// No database yet: lint does not create one, and says where it looked.
	if out, code := run("config", "lint"); code != 1 || !strings.Contains(out, "local_dept_id 2403 is not in departments.csv") {
		t.Fatalf("lint before the import: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "zhizhi.db")); err == nil {
		t.Errorf("config lint created a database")
	}
	imp := filepath.Join(t.TempDir(), "oa.csv")
	if err := os.WriteFile(imp, []byte(header+"\n"+gone+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := run("dept", "import", imp); code != 0 {
		t.Fatalf("dept import: exit %d\n%s", code, out)
	}
	if out, code := run("config", "lint"); code != 0 {
		t.Errorf("lint after importing 2403: exit %d\n%s", code, out)
	}
	// Sync needs every mapped department in the database: the rest of
	// the bundled file too.
	if out, code := run("dept", "import", csvPath); code != 0 {
		t.Fatalf("dept import of the bundled file: exit %d\n%s", code, out)
	}
	if out, code := run("config", "sync"); code != 0 {
		t.Errorf("sync after importing 2403: exit %d\n%s", code, out)
	}
	out, code := run("dept", "list")
	if code != 0 {
		t.Fatalf("dept list: exit %d\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "DEPT_ID") || !strings.Contains(lines[0], "DEPT_NAME") {
		t.Errorf("dept list header %q", lines[0])
	}
	found := false
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "2403" && f[1] == "连州市人民政府办公室" && f[2] == "2400" {
			found = true
		}
	}
	if !found {
		t.Errorf("dept list does not show 2403 连州市人民政府办公室 under 2400:\n%s", out)
	}
}
