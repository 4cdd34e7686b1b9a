package cli

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// exampleFileRe finds the examples of docs/config.md that are whole files:
// a fenced YAML block whose first line names the file.
var exampleFileRe = regexp.MustCompile("(?ms)^```yaml\n# (config/[^\n]+\\.yaml)\n(.*?)^```")

// TestConfigDocExamplesWork: the examples in docs/config.md are what a new
// user copies. Written out as a configuration directory (with the bundled
// departments.csv, which they bind to), they lint clean and sync, and every
// target they declare is green in `zhizhi validate` against the simulated
// web — run through the binary as a user would, at polite rates.
func TestConfigDocExamplesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and validates against the simulated web")
	}
	waitBound(t)
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	files := exampleFileRe.FindAllStringSubmatch(string(doc), -1)
	var sites int
	for _, f := range files {
		name := path.Clean(f[1])
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f[2]), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "config/sites/") {
			sites++
		}
	}
	if sites < 2 {
		t.Fatalf("docs/config.md has %d site examples marked with their file name, want a template site and a CMS site", sites)
	}
	csv, err := os.ReadFile(filepath.Join(bundledConfig, "departments.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "departments.csv"), csv, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	w, err := sim.Start(ctx, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data := filepath.Join(dir, "data")
	env := []string{"ZHIZHI_DATA_DIR=" + data, "ZHIZHI_CONFIG_DIR=" + cfg, "ZHIZHI_RESOLVE=" + w.ResolveString(),
		"ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium")}

	for _, args := range [][]string{
		{"config", "lint"},
		{"dept", "import", filepath.Join(cfg, "departments.csv")},
		{"config", "sync"},
	} {
		r := runZhizhi(t, env, args...)
		if r.code != 0 {
			t.Fatalf("zhizhi %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		if args[1] == "lint" && (!strings.HasPrefix(r.stdout, "ok: ") || strings.Contains(r.stdout+r.stderr, "warning")) {
			t.Errorf("config lint of the examples: %s%s", r.stdout, r.stderr)
		}
	}

	st, err := store.Open(ctx, "sqlite://"+filepath.Join(data, "zhizhi.db"), data)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 2 {
		t.Fatalf("the examples declare %d targets", len(targets))
	}
	for _, tg := range targets {
		r := runZhizhi(t, env, "validate", "--target", tg.TargetCode, "--json")
		var v struct {
			Green     bool     `json:"green"`
			ListItems int      `json:"list_items"`
			Title     string   `json:"title"`
			Problems  []string `json:"problems"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("validate --target %s: not JSON: %v\n%s%s", tg.TargetCode, err, r.stdout, r.stderr)
		}
		if r.code != 0 || !v.Green || v.ListItems == 0 || v.Title == "" {
			t.Errorf("validate --target %s: exit %d, %+v\n%s", tg.TargetCode, r.code, v, r.stderr)
		}
	}
}
