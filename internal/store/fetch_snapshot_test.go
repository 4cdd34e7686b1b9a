package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestFetchSnapshotReplacedAndCollected: a URL's snapshot is its last
// fetch; gc keeps the blob the snapshot names and collects the one it
// replaced, on both dialects.
func TestFetchSnapshotReplacedAndCollected(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const u = "http://www.gd.gov.test/zwgk/a.html"
		if _, _, err := s.FetchSnapshot(ctx, u); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no snapshot yet: %v", err)
		}
		at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
		first := &store.FetchSnapshot{URL: u, FinalURL: u, Status: 200, ContentType: "text/html", FetchedAt: at}
		if err := s.SaveFetchSnapshot(ctx, first, []byte("<p>第一版</p>")); err != nil {
			t.Fatal(err)
		}
		second := &store.FetchSnapshot{URL: u, FinalURL: u + "?v=2", Status: 200, ContentType: "text/html; charset=gbk",
			WireBytes: 99, Duration: 1500 * time.Millisecond, Tier: "httpx", FetchedAt: at.Add(time.Hour)}
		if err := s.SaveFetchSnapshot(ctx, second, []byte("<p>第二版</p>")); err != nil {
			t.Fatal(err)
		}
		got, body, err := s.FetchSnapshot(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != "<p>第二版</p>" || got.FinalURL != u+"?v=2" || got.RawSHA256 != second.RawSHA256 ||
			got.ContentType != "text/html; charset=gbk" || got.Duration != 1500*time.Millisecond || !got.FetchedAt.Equal(second.FetchedAt) {
			t.Errorf("snapshot %+v body %q", got, body)
		}
		refs, err := s.BlobRefs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !refs[second.RawPath] || refs[first.RawPath] {
			t.Fatalf("refs %v: want the second body only", refs)
		}
		res, err := s.Blobs().GC(ctx, refs, time.Now().Add(time.Hour), false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 1 || res.RemovedPaths[0] != first.RawPath {
			t.Errorf("gc: %+v, want the replaced body %s removed", res, first.RawPath)
		}
		if _, body, err := s.FetchSnapshot(ctx, u); err != nil || string(body) != "<p>第二版</p>" {
			t.Errorf("after gc: %q, %v", body, err)
		}
	})
}
