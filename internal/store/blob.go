package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Blobs is the content-addressed file store for raw HTML, extracted text and
// attachments. A blob is named by the SHA-256 of its bytes, and its name is
// the path blobs/ab/cd/<sha256> whichever dialect keeps it; it is written
// once and never changed, so the same content stored twice takes the space
// of one.
//
// Where the bytes live follows the database, so that every process sharing
// the database can read what any of them stored: with SQLite they are files
// under Dir, with PostgreSQL rows of the blob table. A blob a PostgreSQL
// deployment wrote to Dir before blobs moved into the database is still
// read from there. A Blobs made by hand (Blobs{Dir: d}) is always the files.
type Blobs struct {
	Dir string // the data directory

	s *Store // set by Store.Blobs; with PostgreSQL the bytes live in it
}

// inDB says whether this store keeps new blobs in the database.
func (b Blobs) inDB() bool { return b.s != nil && b.s.dialect == DialectPostgres }

// blobPath is the name of the blob whose SHA-256 is sha256hex.
func blobPath(sha256hex string) string {
	return path.Join("blobs", sha256hex[0:2], sha256hex[2:4], sha256hex)
}

// blobSHA returns the SHA-256 a well-formed blob path names.
func blobSHA(clean string) (string, bool) {
	parts := strings.Split(clean, "/")
	if len(parts) != 4 || parts[0] != "blobs" {
		return "", false
	}
	sum := parts[3]
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" || parts[1] != sum[0:2] || parts[2] != sum[2:4] {
		return "", false
	}
	return sum, true
}

// Put stores data and returns its path (the value to keep in the database)
// and its SHA-256 in hex. A reader never sees half a blob; an existing blob
// is left untouched, only marked as stored again so that a concurrent gc
// spares it for the row about to refer to it.
func (b Blobs) Put(ctx context.Context, data []byte) (relPath, sha256hex string, err error) {
	sum := sha256.Sum256(data)
	sha256hex = hex.EncodeToString(sum[:])
	relPath = blobPath(sha256hex)
	if b.inDB() {
		err = b.s.putBlob(ctx, sha256hex, data)
	} else {
		err = b.putFile(sha256hex, relPath, data)
	}
	if err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	return relPath, sha256hex, nil
}

// PutFile stores the file at path as Put stores bytes, reading it part by
// part: a release's search index may be larger than is sensible to hold
// in memory. The file must not change while it is stored (its hash is
// taken first, and a blob that does not match it is refused on reading).
func (b Blobs) PutFile(ctx context.Context, path string) (relPath, sha256hex string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	sha256hex = hex.EncodeToString(h.Sum(nil))
	relPath = blobPath(sha256hex)
	if b.inDB() {
		err = b.s.putBlobParts(ctx, sha256hex, size, func(i int, buf []byte) ([]byte, error) {
			n := int(min(int64(blobChunkSize), size-int64(i)*blobChunkSize))
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			_, err := f.ReadAt(buf, int64(i)*blobChunkSize)
			return buf, err
		})
	} else {
		err = b.writeFile(sha256hex, relPath, func(w io.Writer) error {
			_, err := io.Copy(w, io.NewSectionReader(f, 0, size))
			return err
		})
	}
	if err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	return relPath, sha256hex, nil
}

// putFile writes the blob through a temporary file, flushed and renamed
// into place, so a reader never finds a partial file under the final name.
func (b Blobs) putFile(sha256hex, relPath string, data []byte) error {
	return b.writeFile(sha256hex, relPath, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFile writes the blob with write into a temporary file, flushed and
// renamed into place. A blob there already is only marked fresh.
func (b Blobs) writeFile(sha256hex, relPath string, write func(io.Writer) error) error {
	full := filepath.Join(b.Dir, filepath.FromSlash(relPath))
	if _, err := os.Stat(full); err == nil {
		// Stored again: fresh again, so a concurrent gc leaves it for the
		// row about to refer to it.
		now := time.Now()
		_ = os.Chtimes(full, now, now)
		return nil
	}
	dir := filepath.Dir(full)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+sha256hex[:8]+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), full)
}

// Open opens a blob by the path Put returned; the reader streams it, so a
// large attachment is never held in memory whole. Paths that leave the blob
// directory are refused; a blob that is nowhere is ErrNotFound.
func (b Blobs) Open(ctx context.Context, relPath string) (io.ReadCloser, error) {
	clean := path.Clean(relPath)
	if !strings.HasPrefix(clean, "blobs/") || !fs.ValidPath(clean) {
		return nil, fmt.Errorf("open blob %q: not a blob path", relPath)
	}
	if b.inDB() {
		if sum, ok := blobSHA(clean); ok {
			r, err := b.s.openBlob(ctx, sum)
			if err == nil {
				return r, nil
			}
			if !errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("open blob %q: %w", relPath, err)
			}
		}
		// Not in the database: it may have been written to this
		// machine's data directory before blobs moved into the database.
	}
	f, err := os.Open(filepath.Join(b.Dir, filepath.FromSlash(clean)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open blob %q: %w", relPath, ErrNotFound)
		}
		return nil, fmt.Errorf("open blob %q: %w", relPath, err)
	}
	return f, nil
}

// GCResult is what a blob collection found and did.
type GCResult struct {
	Kept, Removed int
	RemovedBytes  int64
	Young         int // unreferenced but within the grace period
	Temporary     int // leftovers of interrupted writes, removed
	RemovedPaths  []string
}

// GC removes the blobs no row refers to (refs, from Store.BlobRefs) that
// were last stored before notAfter, and the temporary files of interrupted
// writes older than notAfter. Younger unreferenced blobs stay: a running
// crawl writes its blobs before the rows that refer to them. With dryRun
// nothing is removed. With PostgreSQL it collects the database's blobs and
// then the files an older version left in this machine's data directory.
func (b Blobs) GC(ctx context.Context, refs map[string]bool, notAfter time.Time, dryRun bool) (GCResult, error) {
	var res GCResult
	var inDB map[string]bool
	if b.inDB() {
		var err error
		if inDB, err = b.s.gcBlobs(ctx, refs, notAfter, dryRun, &res); err != nil {
			return res, fmt.Errorf("collect blobs in the database: %w", err)
		}
	}
	if err := b.gcFiles(refs, inDB, notAfter, dryRun, &res); err != nil {
		return res, err
	}
	return res, nil
}

// gcFiles collects the blob files under Dir. A referenced file whose blob
// the database also holds (kept) was counted there already.
func (b Blobs) gcFiles(refs, kept map[string]bool, notAfter time.Time, dryRun bool, res *GCResult) error {
	root := filepath.Join(b.Dir, "blobs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(b.Dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		temp := strings.HasPrefix(d.Name(), ".tmp-")
		if !temp && refs[rel] {
			if !kept[rel] {
				res.Kept++
			}
			return nil
		}
		if info.ModTime().After(notAfter) {
			res.Young++
			return nil
		}
		if !dryRun {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if temp {
			res.Temporary++
		} else {
			res.Removed++
			res.RemovedBytes += info.Size()
			res.RemovedPaths = append(res.RemovedPaths, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("collect blobs in %s: %w", root, err)
	}
	return nil
}
