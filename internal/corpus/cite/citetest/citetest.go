// Package citetest is for tests only: it validates CSL-JSON against the
// official CSL-JSON schema (csl-data.json v1.0.2) with Ajv, exactly as
// internal/corpus/cite's own schema test does, so any package that hands
// out citations (the API, the MCP server) can hold them to the schema.
package citetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// npmPackages mirrors internal/corpus/cite's test consumers, so both
// share one install in the user's cache. Only Ajv is used here.
var npmPackages = []string{
	"ajv@8.20.0",
	"citeproc@2.4.63",
	"@citation-js/plugin-csl@0.9.0",
	"@retorquere/bibtex-parser@9.0.29",
}

// SchemaSHA256 is the SHA-256 of csl-data.json at tag v1.0.2 of the
// Citation Style Language schema repository
// (citation-style-language/schema, schemas/input/csl-data.json).
const SchemaSHA256 = "257f86d4c3f19e15c7208657512ad4c9559a3b0d83b03360ed006c5f02d2977c"

// Result is Ajv's verdict on one document.
type Result struct {
	Valid  bool `json:"valid"`
	Errors []struct {
		InstancePath string `json:"instancePath"`
		Keyword      string `json:"keyword"`
		Message      string `json:"message"`
	} `json:"errors"`
}

// Validate validates each document (a CSL-JSON array of items, as
// csl-data.json describes) against the official schema in one run of Ajv
// and returns one Result per document, in order. Without node and npm, or
// without the schema file, the test is skipped (see Schema); under CI=true
// a missing node or npm fails it.
func Validate(t testing.TB, docs ...[]byte) []Result {
	t.Helper()
	schema := Schema(t)
	prefix := consumers(t)
	script := filepath.Join(t.TempDir(), "validate.cjs")
	if err := os.WriteFile(script, []byte(validateScript), 0o644); err != nil {
		t.Fatal(err)
	}
	in := []byte("[")
	for i, d := range docs {
		if i > 0 {
			in = append(in, ',')
		}
		in = append(in, d...)
	}
	in = append(in, ']')
	cmd := exec.CommandContext(t.Context(), "node", script, prefix, schema)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node validate.cjs: %v\n%s", err, stderr.String())
	}
	var r []Result
	if err := json.Unmarshal(out, &r); err != nil || len(r) != len(docs) {
		t.Fatalf("read Ajv's answer %q: %v", out, err)
	}
	return r
}

// Schema returns the path of the official CSL-JSON schema, v1.0.2. No npm
// package ships it, so it is looked for in $CSL_DATA_SCHEMA and then in
// shared/csl/csl-data.json beside the checkout; without it the test is
// skipped with a note saying where to put it. A file that is not v1.0.2
// byte for byte fails the test.
func Schema(t testing.TB) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("CSL_DATA_SCHEMA"); p != "" {
		candidates = append(candidates, p)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		// internal/corpus/cite/citetest → the checkout → its sibling shared/.
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "shared", "csl", "csl-data.json"))
	}
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != SchemaSHA256 {
			t.Fatalf("%s is not csl-data.json v1.0.2 (sha256 %s, want %s)", p, got, SchemaSHA256)
		}
		return p
	}
	t.Skipf("the official CSL-JSON schema is not here: put schemas/input/csl-data.json of "+
		"citation-style-language/schema tag v1.0.2 (sha256 %s) at shared/csl/csl-data.json or name it in CSL_DATA_SCHEMA; looked in %v",
		SchemaSHA256, candidates)
	return ""
}

// consumers installs npmPackages once into the user's cache (house
// pattern: internal/acquire/firecrawltest) and returns the install prefix.
func consumers(t testing.TB) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are needed to validate CSL-JSON with Ajv: %v", err)
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

// validateScript is internal/corpus/cite/testdata/validate.cjs: Ajv with
// the schema named in argv[3], installed under argv[2]; stdin a JSON
// array of documents; stdout one {"valid", "errors"} per document.
const validateScript = `const { createRequire } = require('node:module')
const fs = require('node:fs')
const req = createRequire(process.argv[2] + '/')
const Ajv = req('ajv')
const schema = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))
const docs = JSON.parse(fs.readFileSync(0, 'utf8'))
// csl-data.json uses union types and anyOf branches without "type": valid
// JSON Schema draft-07 that Ajv's strict mode only warns about.
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false })
const validate = ajv.compile(schema)
const results = docs.map(doc => {
  const valid = validate(doc)
  return { valid, errors: validate.errors || [] }
})
process.stdout.write(JSON.stringify(results))
`
