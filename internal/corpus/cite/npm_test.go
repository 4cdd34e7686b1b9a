package cite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The real consumers the tests run (test-only, never shipped): Ajv for
// JSON Schema, citeproc-js (the CSL processor inside Zotero and Mendeley)
// with the en-US locale shipped by @citation-js/plugin-csl, and the
// BibTeX parser of Better BibTeX for Zotero.
var npmPackages = []string{
	"ajv@8.20.0",
	"citeproc@2.4.63",
	"@citation-js/plugin-csl@0.9.0",
	"@retorquere/bibtex-parser@9.0.29",
}

// consumers installs npmPackages once into the user's cache (house
// pattern: internal/acquire/firecrawltest) and returns the install
// prefix. Without node and npm the test is skipped, except under CI=true,
// where that is a failure.
func consumers(t testing.TB) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are needed to run the citation consumers: %v", err)
		}
		t.Skipf("node or npm missing (%v); CI=true makes this a failure", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.New()
	for _, p := range npmPackages {
		sum.Write([]byte(p + "\n"))
	}
	dir := filepath.Join(cache, "zhizhi-test", "cite-npm-"+hex.EncodeToString(sum.Sum(nil))[:12])
	marker := filepath.Join(dir, "node_modules", "@retorquere", "bibtex-parser", "package.json")
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		// Installed beside and moved into place, so an interrupted run
		// never leaves a half copy to be trusted.
		tmp := dir + ".tmp-" + strconv.Itoa(os.Getpid())
		os.RemoveAll(tmp)
		args := append([]string{"install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp}, npmPackages...)
		cmd := exec.CommandContext(t.Context(), npm, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			t.Fatalf("npm install %v: %v\n%s", npmPackages, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(marker); serr != nil {
				t.Fatalf("install the citation consumers into %s: %v", dir, err)
			}
		}
	}
	return dir
}

// node runs testdata/script with args, stdin as its input, and returns
// its standard output; a failing script fails the test.
func node(t testing.TB, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "node", append([]string{filepath.Join("testdata", script)}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	return out
}

// cslSchemaSHA256 is the SHA-256 of csl-data.json at tag v1.0.2 of the
// Citation Style Language schema repository
// (citation-style-language/schema, schemas/input/csl-data.json).
const cslSchemaSHA256 = "257f86d4c3f19e15c7208657512ad4c9559a3b0d83b03360ed006c5f02d2977c"

// cslSchema returns the path of the official CSL-JSON schema, v1.0.2.
// No npm package ships it (the CSL project publishes it only from its
// repository), so it is looked for in $CSL_DATA_SCHEMA and then in
// shared/csl/csl-data.json beside the checkout; without it the schema
// test is skipped with a note saying where to put it. A file that is not
// v1.0.2 byte for byte fails the test.
func cslSchema(t testing.TB) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("CSL_DATA_SCHEMA"); p != "" {
		candidates = append(candidates, p)
	}
	if wd, err := os.Getwd(); err == nil {
		// internal/corpus/cite → the checkout → its sibling shared/.
		candidates = append(candidates, filepath.Join(wd, "..", "..", "..", "..", "shared", "csl", "csl-data.json"))
	}
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != cslSchemaSHA256 {
			t.Fatalf("%s is not csl-data.json v1.0.2 (sha256 %s, want %s)", p, got, cslSchemaSHA256)
		}
		return p
	}
	t.Skipf("the official CSL-JSON schema is not here: put schemas/input/csl-data.json of "+
		"citation-style-language/schema tag v1.0.2 (sha256 %s) at shared/csl/csl-data.json or name it in CSL_DATA_SCHEMA; looked in %v",
		cslSchemaSHA256, candidates)
	return ""
}
