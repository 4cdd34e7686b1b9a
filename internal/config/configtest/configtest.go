// Package configtest makes configuration directories for tests.
package configtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/config"
)

// OneQuietSite makes a configuration directory holding bundled's adapters
// and departments and, of its sites, only gd_ref, switched off: a serve
// started on it has nothing to crawl until a site is added.
func OneQuietSite(t testing.TB, bundled string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "config")
	for _, f := range []string{filepath.Join(config.CMSDir, "gkmlpt.yaml"), config.DepartmentsFile, config.TopicsFile,
		filepath.Join(config.SitesDir, "gd_ref.yaml")} {
		data, err := os.ReadFile(filepath.Join(bundled, f))
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
