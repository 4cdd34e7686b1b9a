// Package firecrawltest installs Firecrawl's JavaScript SDK for tests that
// run it against zhizhi, with only the base URL changed.
package firecrawltest

import (
	"testing"

	"zhizhi/internal/npmtest"
)

// Version is the version of @mendable/firecrawl-js the tests run.
const Version = "4.42.0"

// SDK installs the SDK (test-only, never shipped) into the user's cache
// once and returns the file URL of its ES module, for a script's
// `await import(url)`. Without node and npm the test is skipped, except
// under CI=true, where that is a failure.
func SDK(t testing.TB) string {
	t.Helper()
	prefix := npmtest.Install(t, "@mendable/firecrawl-js@"+Version)
	return npmtest.FileURL(npmtest.Path(t, prefix, "@mendable/firecrawl-js", "dist", "index.js"))
}
