package cite

import (
	"path/filepath"
	"testing"

	"zhizhi/internal/corpus/cite/citetest"
	"zhizhi/internal/npmtest"
)

// consumers installs the citation consumers (citetest.Packages: Ajv,
// citeproc-js with its en-US locale, the BibTeX parser of Better BibTeX)
// once into the user's cache and returns the install prefix. Without node
// and npm the test is skipped, except under CI=true, where that is a
// failure.
func consumers(t testing.TB) string {
	t.Helper()
	return npmtest.Install(t, citetest.Packages...)
}

// node runs testdata/script with args, stdin as its input, and returns
// its standard output; a failing script fails the test.
func node(t testing.TB, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	return npmtest.Node(t, npmtest.Script{Path: filepath.Join("testdata", script), Args: args, Stdin: stdin})
}
