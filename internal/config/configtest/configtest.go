// Package configtest makes configuration directories for tests.
package configtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robfig/cron/v3"
	"golang.org/x/text/encoding/simplifiedchinese"

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

// CheckNightly asserts spec is a valid daily cron inside 01:00–04:59.
func CheckNightly(t testing.TB, spec string) {
	t.Helper()
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		t.Errorf("cron %q does not parse: %v", spec, err)
		return
	}
	s, ok := sched.(*cron.SpecSchedule)
	if !ok {
		t.Errorf("cron %q is not a spec schedule", spec)
		return
	}
	for h := 0; h < 24; h++ {
		if s.Hour&(1<<uint(h)) != 0 && (h < 1 || h > 4) {
			t.Errorf("cron %q runs at hour %d, outside 01:00–04:59", spec, h)
		}
	}
}

// GB18030 encodes text as an OA system on Chinese Windows exports it:
// GB18030 (GBK) bytes. It fails the test when text has nothing that GB18030
// writes differently from UTF-8.
func GB18030(t testing.TB, text string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b, []byte(text)) {
		t.Fatal("test data is not GB18030-specific")
	}
	return b
}
