package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigLintOwned: `zhizhi config lint` refuses owned: true for a site
// whose host ZHIZHI_RESOLVE does not pin to loopback, with the file, line
// and column, and accepts it once the host is pinned to 127.0.0.1.
func TestConfigLintOwned(t *testing.T) {
	dir := t.TempDir()
	cms, err := os.ReadFile(filepath.Join("..", "config", "testdata", "lint_good", "cms", "gkmlpt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	site := "site_code: owned_site\nsite_name: 某县人民政府\nbase_url: http://www.owned.gov.test\nsite_role: county_local\n" +
		"cms_adapter: gkmlpt\naccess: full\nowned: true\nadapter_params:\n  sid: \"1\"\ndepts:\n  - dept_path: xxgk\n" +
		"    dept_binding: city_level\n    columns:\n      - {column_id: \"1\", name: 规章文件, category: 法规文件}\n"
	for path, body := range map[string][]byte{"cms/gkmlpt.yaml": cms, "sites/owned.yaml": []byte(site)} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lint := func(resolve string) (string, error) {
		return runInProcess("--resolve", resolve, "config", "lint", "--dir", dir)
	}
	out, err := lint("")
	var ee *exitError
	want := filepath.Join(dir, "sites", "owned.yaml") + ":7:8: owned: true for www.owned.gov.test, which ZHIZHI_RESOLVE does not map to a loopback address"
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(out, want) {
		t.Errorf("lint without a resolve map: err %v, output %q; want exit 1 and %q", err, out, want)
	}
	if out, err := lint("www.owned.gov.test=203.0.113.9:80"); err == nil || !strings.Contains(out, want) {
		t.Errorf("lint with the host pinned to a public address: err %v, output %q; want the owned error", err, out)
	}
	if out, err := lint("www.owned.gov.test=127.0.0.1:18080"); err != nil || strings.Contains(out, "owned") {
		t.Errorf("lint with the host pinned to loopback: err %v, output %q; want clean", err, out)
	}
}
