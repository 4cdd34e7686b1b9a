// Package citetest is for tests only: it validates CSL-JSON against the
// official CSL-JSON schema (csl-data.json v1.0.2) with Ajv, so any package
// that hands out citations (internal/corpus/cite itself, the API, the MCP
// server) holds them to the schema the same way.
package citetest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"zhizhi/internal/npmtest"
)

// Packages are the real consumers of citations the tests run (test-only,
// never shipped), installed together so every test shares one install:
// Ajv for JSON Schema, citeproc-js (the CSL processor inside Zotero and
// Mendeley) with the en-US locale shipped by @citation-js/plugin-csl, and
// the BibTeX parser of Better BibTeX for Zotero. Validate uses Ajv;
// internal/corpus/cite's tests run the others.
var Packages = []string{
	"ajv@8.20.0",
	"citeproc@2.4.63",
	"@citation-js/plugin-csl@0.9.0",
	"@retorquere/bibtex-parser@9.0.29",
}

// validateScript is Ajv with the schema named in argv[3], installed under
// argv[2]; stdin a JSON array of documents; stdout one {"valid",
// "errors"} per document.
//
//go:embed validate.cjs
var validateScript []byte

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
	prefix := npmtest.Install(t, Packages...)
	script := filepath.Join(t.TempDir(), "validate.cjs")
	if err := os.WriteFile(script, validateScript, 0o644); err != nil {
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
	out := npmtest.Node(t, npmtest.Script{Path: script, Args: []string{prefix, schema}, Stdin: in})
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
