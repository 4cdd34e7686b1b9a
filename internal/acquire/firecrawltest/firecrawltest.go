// Package firecrawltest installs Firecrawl's JavaScript SDK for tests that
// run it against zhizhi, with only the base URL changed.
package firecrawltest

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Version is the version of @mendable/firecrawl-js the tests run.
const Version = "4.42.0"

// SDK installs the SDK (test-only, never shipped) into the user's cache
// once and returns the file URL of its ES module, for a script's
// `await import(url)`. Without node and npm the test is skipped, except
// under CI=true, where that is a failure.
func SDK(t testing.TB) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are needed to run Firecrawl's SDK: %v", err)
		}
		t.Skipf("node or npm missing (%v); CI=true makes this a failure", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "zhizhi-test", "firecrawl-js-"+Version)
	entry := filepath.Join(dir, "node_modules", "@mendable", "firecrawl-js", "dist", "index.js")
	if _, err := os.Stat(entry); errors.Is(err, fs.ErrNotExist) {
		// Installed beside and moved into place, so a run interrupted
		// half-way never leaves a broken copy to be trusted.
		tmp := dir + ".tmp-" + strconv.Itoa(os.Getpid())
		os.RemoveAll(tmp)
		cmd := exec.CommandContext(t.Context(), npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp,
			"@mendable/firecrawl-js@"+Version)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			t.Fatalf("npm install @mendable/firecrawl-js@%s: %v\n%s", Version, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(entry); serr != nil {
				t.Fatalf("install the SDK into %s: %v", dir, err)
			}
		}
	}
	return "file://" + filepath.ToSlash(entry)
}
