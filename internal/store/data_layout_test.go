package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/store"
)

// TestDataDirLayoutIsDocumented: an operator who looks into the data
// directory finds every file and directory zhizhi made there described in
// docs/data.md, under the name it really has. The test stores a blob, takes
// a host lock and leaves a half-written blob behind (as a crash would),
// then matches everything on disk against the layout the document draws;
// and the document's worked example of a blob name is what Put returns.
func TestDataDirLayoutIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/data.md")
	if err != nil {
		t.Fatal(err)
	}
	patterns := layoutPatterns(t, string(doc))

	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "zhizhi.db"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, sum, err := s.Blobs().Put(ctx, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "`"+rel+"`") || !strings.Contains(string(doc), "`hello`") {
		t.Errorf("docs/data.md does not give the stored name of `hello` as `%s`", rel)
	}
	release, err := s.LockHost(ctx, "www.gd.gov.test")
	if err != nil {
		t.Fatal(err)
	}
	release()
	// What a crash between write and rename leaves.
	tmp, err := os.CreateTemp(filepath.Join(dir, filepath.Dir(rel)), ".tmp-"+sum[:8]+"-*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	// The write-ahead log exists while the store is open.
	seen := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		r = filepath.ToSlash(r)
		if d.IsDir() {
			r += "/"
		}
		seen++
		for _, re := range patterns {
			if re.MatchString(r) {
				return nil
			}
		}
		t.Errorf("%s is in the data directory but not in the layout of docs/data.md", r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if seen < 6 { // zhizhi.db, blobs/, two levels, the blob, locks/…
		t.Fatalf("only %d entries in the data directory", seen)
	}
}

// layoutPatterns reads the drawing of the data directory in docs/data.md
// (the fenced block that starts with "<data dir>/"): the first word of each
// line is a path, with <placeholders> and the example hex digits "ab", "cd".
func layoutPatterns(t *testing.T, doc string) []*regexp.Regexp {
	t.Helper()
	_, block, ok := strings.Cut(doc, "```\n<data dir>/\n")
	if !ok {
		t.Fatal("docs/data.md draws no layout starting with <data dir>/")
	}
	block, _, _ = strings.Cut(block, "```")
	placeholder := map[string]string{
		"<sha256>": "[0-9a-f]{64}", "<8 hex>": "[0-9a-f]{8}", "<digits>": "[0-9]+", "<host>": "[a-z0-9._-]+",
	}
	var out []*regexp.Regexp
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "<8 hex>", "<8hex>"))
		if line == "" {
			continue
		}
		p := strings.ReplaceAll(strings.Fields(line)[0], "<8hex>", "<8 hex>")
		re := regexp.QuoteMeta(p)
		for ph, sub := range placeholder {
			re = strings.ReplaceAll(re, regexp.QuoteMeta(ph), sub)
		}
		re = strings.ReplaceAll(re, "blobs/ab/", "blobs/[0-9a-f]{2}/")
		re = strings.ReplaceAll(re, "[0-9a-f]{2}/cd/", "[0-9a-f]{2}/[0-9a-f]{2}/")
		out = append(out, regexp.MustCompile("^"+re+"$"))
	}
	if len(out) == 0 {
		t.Fatal("the layout in docs/data.md is empty")
	}
	return out
}
