package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitWritesAConfigLintAccepts: there is no default configuration
// directory (a command that needs one refuses, exit 2, and says to set
// ZHIZHI_CONFIG_DIR or run init); `zhizhi init DIR` writes a commented
// starting point that `config lint` accepts; init refuses a non-empty
// directory with exit 2 and writes nothing into it.
func TestInitWritesAConfigLintAccepts(t *testing.T) {
	work := t.TempDir()
	// Run where a ./config exists: it must not be taken as the operator's.
	if err := os.MkdirAll(filepath.Join(work, "config", "sites"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runZhizhi(t, []string{"ZHIZHI_DATA_DIR=" + filepath.Join(work, "data")}, "config", "lint")
	if r.code != 2 || !strings.Contains(r.stderr, "ZHIZHI_CONFIG_DIR") || !strings.Contains(r.stderr, "zhizhi init") {
		t.Errorf("config lint with no configuration directory chosen: exit %d, want 2 naming ZHIZHI_CONFIG_DIR and zhizhi init\n%s%s", r.code, r.stdout, r.stderr)
	}

	dir := filepath.Join(work, "ops-config")
	r = runZhizhi(t, nil, "init", dir)
	if r.code != 0 {
		t.Fatalf("init %s: exit %d\n%s%s", dir, r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"sites/example.yaml", "cms/gkmlpt.yaml", "topic_synonyms.yaml", "departments.csv", "alerts.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("init did not write %s: %v", f, err)
			continue
		}
		if strings.HasSuffix(f, ".yaml") && !strings.Contains(string(b), "#") {
			t.Errorf("%s has no comment to guide its reader", f)
		}
	}
	r = runZhizhi(t, []string{"ZHIZHI_CONFIG_DIR=" + dir, "ZHIZHI_DATA_DIR=" + filepath.Join(work, "data")}, "config", "lint")
	if r.code != 0 {
		t.Errorf("config lint of what init wrote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	before := listFiles(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "sites", "example.yaml"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runZhizhi(t, nil, "init", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("init over a non-empty directory: exit %d, want 2 saying it is not empty\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sites", "example.yaml")); string(b) != "# mine\n" {
		t.Errorf("init overwrote sites/example.yaml: %q", b)
	}
	if after := listFiles(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("init changed the directory's files: %v, was %v", after, before)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 2 {
		t.Errorf("init left something beside the directory: %v", entries)
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDemoRefusesHostsOutsideTheSimulatedWeb: a site added to the demo's
// configuration on a host the simulated web does not serve makes `zhizhi
// demo` refuse (exit 2, naming the host) before it crawls anything — and
// the operator's data and configuration directories (ZHIZHI_DATA_DIR,
// ZHIZHI_CONFIG_DIR) are not touched by the demo at all.
func TestDemoRefusesHostsOutsideTheSimulatedWeb(t *testing.T) {
	work := t.TempDir()
	demoDir := filepath.Join(work, "demo")
	opsData := filepath.Join(work, "ops-data")
	opsConfig := filepath.Join(work, "ops-config")
	if r := runZhizhi(t, nil, "init", opsConfig); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	cfg := filepath.Join(demoDir, "config")
	if err := os.CopyFS(cfg, os.DirFS(bundledConfig)); err != nil {
		t.Fatal(err)
	}
	outside := `site_code: outside
site_name: 外部站点
base_url: https://www.qingyuan.gov.cn
site_role: county_local
access: summary
respect_robots: true
template:
  list: {item: "ul li", link: "a@href", title: "a", date: "span"}
  detail: {title: "h1", body: "div#zoom"}
targets:
  - target_code: outside_tzgg
    target_name: 外部站点｜通知公告
    entry_url: https://www.qingyuan.gov.cn/tzgg/
    dept_binding: city_level
    channel_name: 通知公告
    content_category: 通知公告
`
	if err := os.WriteFile(filepath.Join(cfg, "sites", "outside.yaml"), []byte(outside), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"ZHIZHI_DEMO_DIR=" + demoDir, "ZHIZHI_DATA_DIR=" + opsData, "ZHIZHI_CONFIG_DIR=" + opsConfig,
		"ZHIZHI_CHROMIUM=" + filepath.Join(work, "no-chromium")}
	for _, mode := range []string{"--once", "--serve"} {
		r := runZhizhiFor(t, 5, append(env, "ZHIZHI_LISTEN=127.0.0.1:0"), "demo", mode)
		if r.code != 2 || !strings.Contains(r.stderr, "www.qingyuan.gov.cn") || !strings.Contains(r.stderr, "simulated web does not serve") {
			t.Errorf("demo %s with a site outside the simulated web: exit %d, want 2 naming www.qingyuan.gov.cn\nstdout:\n%s\nstderr:\n%s",
				mode, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "开始采集") || strings.Contains(r.stdout, "管理后台") {
			t.Errorf("demo %s went on after the refusal:\n%s", mode, r.stdout)
		}
	}
	if _, err := os.Stat(opsData); !os.IsNotExist(err) {
		t.Errorf("the demo touched ZHIZHI_DATA_DIR %s: %v", opsData, err)
	}
	if _, err := os.Stat(filepath.Join(opsConfig, "sites", "qingyuan.yaml")); !os.IsNotExist(err) {
		t.Errorf("the demo wrote into ZHIZHI_CONFIG_DIR: %v", err)
	}
}
