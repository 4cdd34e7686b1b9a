package crawl_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCrawlOnPostgresStoresFilesForEveryWorker: a crawl by one worker on
// PostgreSQL leaves nothing in its data directory, and another worker, on
// another machine with a data directory of its own, reads every page, text
// and attachment the articles name, each attachment byte for byte the file
// the site serves.
func TestCrawlOnPostgresStoresFilesForEveryWorker(t *testing.T) {
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	crawler, err := store.Open(ctx, url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer crawler.Close()
	w := newWorld(t, crawler, false)
	w.crawl(t, nil, false)
	if _, err := os.Stat(filepath.Join(crawler.DataDir(), "blobs")); err == nil {
		t.Errorf("the crawl wrote files to its data directory")
	}

	other, err := store.Open(ctx, url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	truth := map[string]string{} // attachment URL → SHA-256 of what the site serves
	for _, a := range w.sim.Truth() {
		for _, f := range a.Attachments {
			truth[f.URL] = f.SHA256
		}
	}
	read := func(rel string) []byte {
		t.Helper()
		r, err := other.Blobs().Open(ctx, rel)
		if err != nil {
			t.Fatalf("the other worker cannot open %s: %v", rel, err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("the other worker cannot read %s: %v", rel, err)
		}
		return b
	}
	pages, attachments := 0, 0
	for _, a := range crawltest.AllArticles(t, other) {
		if a.Status != model.StatusReady || a.RawHTMLPath == "" {
			continue
		}
		pages++
		raw := read(a.RawHTMLPath)
		if sum := sha256.Sum256(raw); filepath.Base(a.RawHTMLPath) != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: raw HTML %s reads back as other bytes", a.URL, a.RawHTMLPath)
		}
		if a.TextPath != "" && string(read(a.TextPath)) != a.ContentText {
			t.Errorf("%s: text %s differs from content_text", a.URL, a.TextPath)
		}
		for _, f := range a.Attachments {
			if f.FilePath == "" {
				continue
			}
			attachments++
			sum := sha256.Sum256(read(f.FilePath))
			if got := hex.EncodeToString(sum[:]); got != f.FileHash || got != truth[f.URL] {
				t.Errorf("%s: attachment %s reads back with SHA-256 %s; recorded %s, served %s", a.URL, f.URL, got, f.FileHash, truth[f.URL])
			}
		}
	}
	if pages < 10 || attachments < 5 {
		t.Fatalf("only %d pages and %d attachments stored: the crawl did not run", pages, attachments)
	}
}
