package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/config"
)

// bundledConfig is the configuration the demo ships.
const bundledConfig = "../../demo/config"

// testConfigDir makes a configuration directory holding the bundled
// adapters and departments and, of the sites, only gd_ref, switched off:
// a running serve has nothing to crawl until a site is added.
func testConfigDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "config")
	for _, f := range []string{filepath.Join(config.CMSDir, "gkmlpt.yaml"), config.DepartmentsFile, config.TopicsFile,
		filepath.Join(config.SitesDir, "gd_ref.yaml")} {
		data, err := os.ReadFile(filepath.Join(bundledConfig, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(f, config.SitesDir) {
			data = []byte(strings.Replace(string(data), "\nenabled: true\n", "\nenabled: false\n", 1))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
