package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const mib = 1 << 20

// randomBytes returns n bytes that do not compress, like a PDF or a JPEG,
// the same for the same seed.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	rand.NewChaCha8(key).Read(b)
	return b
}

// readBlob reads a whole blob back through Open.
func readBlob(t *testing.T, b store.Blobs, rel string) []byte {
	t.Helper()
	r, err := b.Open(context.Background(), rel)
	if err != nil {
		t.Fatalf("open %s: %v", rel, err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return got
}

// blobRows counts the rows of the PostgreSQL blob table holding sum.
func blobRows(t *testing.T, s *store.Store, sum string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM blob WHERE sha256 = $1`, sum).Scan(&n); err != nil {
		t.Fatalf("count blob rows: %v", err)
	}
	return n
}

// TestBlobsLiveWithTheDatabase: with SQLite a stored file is a file in the
// data directory; with PostgreSQL it is in the database and nothing is
// written to the data directory. Either way every size an article can
// bring, up to a 50 MiB attachment, reads back byte for byte.
func TestBlobsLiveWithTheDatabase(t *testing.T) {
	sizes := []int{0, 5, mib - 1, mib, mib + 1, 5*mib/2 + 3, 50 * mib}
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		b := s.Blobs()
		for i, n := range sizes {
			data := randomBytes(uint64(i), n)
			rel, sum, err := b.Put(ctx, data)
			if err != nil {
				t.Fatalf("put %d bytes: %v", n, err)
			}
			if want := "blobs/" + sum[:2] + "/" + sum[2:4] + "/" + sum; rel != want || sum != store.URLHash(string(data)) {
				t.Fatalf("put %d bytes = %s %s, want %s", n, rel, sum, want)
			}
			if got := readBlob(t, b, rel); !bytes.Equal(got, data) {
				t.Fatalf("%d bytes stored, %d different bytes read back", n, len(got))
			}
			// The database reader in reads of every size (an
			// *os.File needs no such proof, and takes long at one byte a call).
			if s.Dialect() == store.DialectPostgres && n < 3*mib {
				r, err := b.Open(ctx, rel)
				if err != nil {
					t.Fatal(err)
				}
				if err := iotest.TestReader(r, data); err != nil {
					t.Errorf("reader of %d bytes: %v", n, err)
				}
				r.Close()
			}
			_, statErr := os.Stat(filepath.Join(s.DataDir(), filepath.FromSlash(rel)))
			switch s.Dialect() {
			case store.DialectSQLite:
				if statErr != nil {
					t.Errorf("with SQLite %s is not a file in the data directory: %v", rel, statErr)
				}
			case store.DialectPostgres:
				if statErr == nil {
					t.Errorf("with PostgreSQL %s was written to the data directory", rel)
				}
				if got := blobRows(t, s, sum); got != 1 {
					t.Errorf("%d rows in the blob table for %s, want 1", got, sum)
				}
			}
		}
		if s.Dialect() == store.DialectPostgres {
			if _, err := os.Stat(filepath.Join(s.DataDir(), "blobs")); err == nil {
				t.Errorf("with PostgreSQL a blobs/ directory was made in the data directory")
			}
		}
	})
}

// TestBlobsWrittenOnceInPostgres: storing the same bytes again writes no
// second copy and leaves the bytes alone; it only marks the blob as stored
// again (so gc spares it), and never moves that mark back in time.
func TestBlobsWrittenOnceInPostgres(t *testing.T) {
	s := storetest.Postgres(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	at := func(tm time.Time) { s.Now = func() time.Time { return tm } }
	data := randomBytes(7, 3*mib+10)

	at(t0)
	p1, sum, err := s.Blobs().Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	var parts int
	var partBytes int64
	count := func() {
		t.Helper()
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*), coalesce(sum(octet_length(data)), 0) FROM blob_chunk WHERE sha256 = $1`, sum).Scan(&parts, &partBytes); err != nil {
			t.Fatal(err)
		}
	}
	count()
	firstParts := parts
	if partBytes != int64(len(data)) {
		t.Fatalf("%d bytes stored for a blob of %d", partBytes, len(data))
	}
	stamps := func() (created, stored time.Time) {
		t.Helper()
		if err := s.DB().QueryRowContext(ctx, `SELECT created_at, stored_at FROM blob WHERE sha256 = $1`, sum).Scan(&created, &stored); err != nil {
			t.Fatal(err)
		}
		return created.UTC(), stored.UTC()
	}

	at(t0.Add(time.Hour))
	p2, _, err := s.Blobs().Put(ctx, data)
	if err != nil || p2 != p1 {
		t.Fatalf("second put = %s, %v; want %s", p2, err, p1)
	}
	count()
	if parts != firstParts || partBytes != int64(len(data)) || blobRows(t, s, sum) != 1 {
		t.Fatalf("second put wrote again: %d parts of %d bytes (first put: %d parts)", parts, partBytes, firstParts)
	}
	if created, stored := stamps(); !created.Equal(t0) || !stored.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after the second put: created %v stored %v, want created %v stored %v", created, stored, t0, t0.Add(time.Hour))
	}

	// A worker whose clock is behind stores it too: the mark stays.
	at(t0.Add(30 * time.Minute))
	if _, _, err := s.Blobs().Put(ctx, data); err != nil {
		t.Fatal(err)
	}
	if _, stored := stamps(); !stored.Equal(t0.Add(time.Hour)) {
		t.Fatalf("a put with an earlier clock moved stored_at back to %v", stored)
	}
	if got := readBlob(t, s.Blobs(), p1); !bytes.Equal(got, data) {
		t.Fatal("the blob changed")
	}
}

// twoWorkers opens two stores on one PostgreSQL database, each with its own
// data directory, as two serve processes on two machines would.
func twoWorkers(t *testing.T) (a, b *store.Store) {
	t.Helper()
	url := storetest.PostgresURL(t)
	open := func() *store.Store {
		s, err := store.Open(context.Background(), url, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return open(), open()
}

// TestBlobsSharedByWorkers: two workers on one PostgreSQL database, with no
// disk in common, each read what the other stored.
func TestBlobsSharedByWorkers(t *testing.T) {
	a, b := twoWorkers(t)
	ctx := context.Background()
	if a.DataDir() == b.DataDir() {
		t.Fatal("the workers share a data directory")
	}
	page := []byte("<html><body>关于印发《清远市2026年重点项目计划》的通知</body></html>")
	attachment := randomBytes(1, 4*mib+123)

	pagePath, _, err := a.Blobs().Put(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	attPath, _, err := b.Blobs().Put(ctx, attachment)
	if err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, b.Blobs(), pagePath); !bytes.Equal(got, page) {
		t.Errorf("worker b read %q of what worker a stored", got)
	}
	if got := readBlob(t, a.Blobs(), attPath); !bytes.Equal(got, attachment) {
		t.Errorf("worker a read %d different bytes of the %d worker b stored", len(got), len(attachment))
	}
}

// TestBlobsConcurrentPutsOfTheSameBytes: two workers storing the same
// attachment at the same moment both succeed and one copy is kept.
func TestBlobsConcurrentPutsOfTheSameBytes(t *testing.T) {
	a, b := twoWorkers(t)
	ctx := context.Background()
	const rounds, putters = 8, 6
	for round := range rounds {
		data := randomBytes(uint64(100+round), 2*mib+round)
		start := make(chan struct{})
		errs := make(chan error, putters)
		paths := make(chan string, putters)
		var wg sync.WaitGroup
		for i := range putters {
			w := a
			if i%2 == 1 {
				w = b
			}
			wg.Go(func() {
				<-start
				p, _, err := w.Blobs().Put(ctx, data)
				errs <- err
				paths <- p
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		close(paths)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent put failed: %v", round, err)
			}
		}
		var first string
		for p := range paths {
			if first == "" {
				first = p
			}
			if p != first {
				t.Fatalf("round %d: puts of the same bytes returned %s and %s", round, first, p)
			}
		}
		if got := readBlob(t, b.Blobs(), first); !bytes.Equal(got, data) {
			t.Fatalf("round %d: read back %d different bytes", round, len(got))
		}
	}
	var n int
	if err := a.DB().QueryRowContext(ctx, `SELECT count(*) FROM blob`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != rounds {
		t.Fatalf("%d blobs stored for %d different contents", n, rounds)
	}
}

// TestBlobsReadOldFilesFromDisk: a PostgreSQL deployment that stored files
// in its data directory before blobs moved into the database still reads
// them there; storing the same bytes again puts them in the database, where
// the other workers read them too; gc collects the old files no row refers
// to and keeps the ones a row does.
func TestBlobsReadOldFilesFromDisk(t *testing.T) {
	a, b := twoWorkers(t)
	ctx := context.Background()
	// What the earlier version wrote: files under worker a's data directory.
	before := store.Blobs{Dir: a.DataDir()}
	oldPage := []byte("<html>2025年的通知</html>")
	oldPath, oldSum, err := before.Put(ctx, oldPage)
	if err != nil {
		t.Fatal(err)
	}
	orphan := []byte("<html>一个被替换的版本</html>")
	orphanPath, _, err := before.Put(ctx, orphan)
	if err != nil {
		t.Fatal(err)
	}
	if blobRows(t, a, oldSum) != 0 {
		t.Fatal("the old file is in the database already")
	}

	if got := readBlob(t, a.Blobs(), oldPath); !bytes.Equal(got, oldPage) {
		t.Fatalf("worker a read %q of its old file", got)
	}
	// Worker b has no such file on its disk.
	if _, err := b.Blobs().Open(ctx, oldPath); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("worker b opening a file only worker a's disk has: %v, want not found", err)
	}
	for _, bad := range []string{"../etc/passwd", "blobs/../../x", "/etc/passwd"} {
		if _, err := a.Blobs().Open(ctx, bad); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Open(%q) = %v, want refused", bad, err)
		}
	}

	// The same page crawled again: stored in the database, where every
	// worker finds it, and read from there even once the file is gone.
	again, _, err := a.Blobs().Put(ctx, oldPage)
	if err != nil || again != oldPath {
		t.Fatalf("put again = %s, %v", again, err)
	}
	if blobRows(t, a, oldSum) != 1 {
		t.Fatal("storing the old page again did not put it in the database")
	}
	if got := readBlob(t, b.Blobs(), oldPath); !bytes.Equal(got, oldPage) {
		t.Fatalf("worker b read %q", got)
	}

	// gc on worker a: the database copy and the old file are one blob in
	// use; the old file nothing refers to goes once it is past the grace.
	refs := map[string]bool{oldPath: true}
	res, err := a.Blobs().GC(ctx, refs, time.Now().Add(time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 1 || res.Removed != 1 || len(res.RemovedPaths) != 1 || res.RemovedPaths[0] != orphanPath {
		t.Fatalf("gc: %+v, want 1 kept and %s removed", res, orphanPath)
	}
	if _, err := os.Stat(filepath.Join(a.DataDir(), filepath.FromSlash(orphanPath))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old unreferenced file is still there: %v", err)
	}
	if err := os.Remove(filepath.Join(a.DataDir(), filepath.FromSlash(oldPath))); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, a.Blobs(), oldPath); !bytes.Equal(got, oldPage) {
		t.Fatalf("worker a read %q once its old file was gone", got)
	}
}

// TestBlobsGCOnBothDialects: gc removes what no row refers to once it was
// last stored more than the grace period ago, keeps what a row refers to and
// what is younger, and a dry run removes nothing. Storing an old orphan
// again makes it young: it is about to be referred to.
func TestBlobsGCOnBothDialects(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Now()
		twoHoursAgo := now.Add(-2 * time.Hour)
		// putAt stores data as if at the given time: the store's clock
		// with PostgreSQL, the file's modification time with SQLite.
		putAt := func(data []byte, at time.Time) string {
			t.Helper()
			s.Now = func() time.Time { return at }
			p, _, err := s.Blobs().Put(ctx, data)
			if err != nil {
				t.Fatal(err)
			}
			if s.Dialect() == store.DialectSQLite {
				if err := os.Chtimes(filepath.Join(s.DataDir(), filepath.FromSlash(p)), at, at); err != nil {
					t.Fatal(err)
				}
			}
			return p
		}
		used := putAt(randomBytes(1, 2*mib), twoHoursAgo)
		old := putAt([]byte("orphan, old"), twoHoursAgo)
		young := putAt([]byte("orphan, fresh"), now)
		refs := map[string]bool{used: true}
		grace := now.Add(-time.Hour)

		dry, err := s.Blobs().GC(ctx, refs, grace, true)
		if err != nil {
			t.Fatal(err)
		}
		if dry.Removed != 1 || dry.Kept != 1 || dry.Young != 1 || dry.RemovedBytes != int64(len("orphan, old")) {
			t.Fatalf("dry run: %+v, want 1 to remove (%d bytes), 1 kept, 1 young", dry, len("orphan, old"))
		}
		for _, p := range []string{used, old, young} {
			readBlob(t, s.Blobs(), p)
		}

		res, err := s.Blobs().GC(ctx, refs, grace, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 1 || len(res.RemovedPaths) != 1 || res.RemovedPaths[0] != old || res.Kept != 1 || res.Young != 1 {
			t.Fatalf("gc: %+v, want %s removed, 1 kept, 1 young", res, old)
		}
		if _, err := s.Blobs().Open(ctx, old); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the removed blob still opens: %v", err)
		}
		if s.Dialect() == store.DialectPostgres {
			var parts int
			if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM blob_chunk WHERE sha256 = $1`, old[len("blobs/ab/cd/"):]).Scan(&parts); err != nil {
				t.Fatal(err)
			}
			if parts != 0 {
				t.Errorf("%d parts of the removed blob are left", parts)
			}
		}
		if got := readBlob(t, s.Blobs(), used); len(got) != 2*mib {
			t.Errorf("the referenced blob lost bytes: %d left", len(got))
		}
		readBlob(t, s.Blobs(), young)

		// An old orphan stored again now is spared.
		again := putAt([]byte("orphan, again"), twoHoursAgo)
		putAt([]byte("orphan, again"), now)
		if res, err := s.Blobs().GC(ctx, refs, grace, false); err != nil || res.Removed != 0 {
			t.Fatalf("gc after an old orphan was stored again: %+v %v", res, err)
		}
		readBlob(t, s.Blobs(), again)
	})
}

// TestBlobReadNeverShort: a blob removed or damaged in the database while
// it is read is an error, never a shorter or different file.
func TestBlobReadNeverShort(t *testing.T) {
	s := storetest.Postgres(t)
	ctx := context.Background()
	data := randomBytes(3, 3*mib)
	rel, sum, err := s.Blobs().Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}

	r, err := s.Blobs().Open(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1000)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	if err := store.Exec(ctx, s, `DELETE FROM blob WHERE sha256 = ?`, sum); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	r.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading a blob removed under the reader: %d more bytes, err %v; want an unexpected EOF", len(rest), err)
	}

	readDamaged := func(damage string) error {
		t.Helper()
		rel, sum, err := s.Blobs().Put(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Exec(ctx, s, damage, sum); err != nil {
			t.Fatal(err)
		}
		defer store.Exec(ctx, s, `DELETE FROM blob WHERE sha256 = ?`, sum)
		r, err := s.Blobs().Open(ctx, rel)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err == nil {
			t.Fatalf("a damaged blob read without error (%d bytes)", len(got))
		}
		return err
	}
	// A part cut short: too few bytes.
	if err := readDamaged(`UPDATE blob_chunk SET data = substring(data from 1 for 100) WHERE sha256 = ? AND seq = 1`); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a blob with a part cut short: %v, want an unexpected EOF", err)
	}
	// One byte changed in place: the length is right, the content is not.
	readDamaged(`UPDATE blob_chunk SET data = set_byte(data, 7, (get_byte(data, 7) + 1) % 256) WHERE sha256 = ? AND seq = 1`)
}

// TestGCSparesABlobStoredDuringItsRun: a crawl that stores an old
// unreferenced blob again after gc looked at it, but before gc removes it,
// is about to refer to it; gc leaves it.
func TestGCSparesABlobStoredDuringItsRun(t *testing.T) {
	s := storetest.Postgres(t)
	ctx := context.Background()
	now := time.Now()
	page := []byte("<html>旧页面</html>")
	s.Now = func() time.Time { return now.Add(-2 * time.Hour) }
	rel, sum, err := s.Blobs().Put(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	if blobRows(t, s, sum) != 1 {
		t.Fatal("the page is not in the database")
	}
	s.Now = func() time.Time { return now }
	raced := false
	store.AfterBlobScan(s, func() {
		raced = true
		if _, _, err := s.Blobs().Put(ctx, page); err != nil {
			t.Error(err)
		}
	})
	res, err := s.Blobs().GC(ctx, map[string]bool{}, now.Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("gc never went from its scan to its deletes")
	}
	if res.Removed != 0 {
		t.Fatalf("gc: %+v, want nothing removed", res)
	}
	if got := readBlob(t, s.Blobs(), rel); !bytes.Equal(got, page) {
		t.Fatalf("read %q", got)
	}
}

// BenchmarkBlob50MiB stores again and reads back a 50 MiB attachment, the
// largest the crawler keeps, on each dialect. With PostgreSQL B/op of a read
// is about the file's size because the driver hands over each 1 MiB part in
// a buffer of its own; what a reader holds at once is about one part.
func BenchmarkBlob50MiB(b *testing.B) {
	data := randomBytes(50, 50*mib)
	for _, d := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			ctx := context.Background()
			rel, _, err := s.Blobs().Put(ctx, data)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("put_again", func(b *testing.B) {
				for b.Loop() {
					if _, _, err := s.Blobs().Put(ctx, data); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("read", func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					r, err := s.Blobs().Open(ctx, rel)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, r); err != nil {
						b.Fatal(err)
					}
					r.Close()
				}
			})
		})
	}
}
