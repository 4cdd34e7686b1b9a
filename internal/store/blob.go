package store

import (
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
// attachments. A blob is named by the SHA-256 of its bytes and
// lives at <Dir>/blobs/ab/cd/<sha256>; it is written once and never changed,
// so the same content stored twice takes the space of one.
type Blobs struct {
	Dir string // the data directory
}

// Put stores data and returns its path relative to Dir (the value to keep
// in the database) and its SHA-256 in hex. Writing goes through a temporary
// file and a rename, so a reader never sees half a blob; an existing blob is
// left untouched.
func (b Blobs) Put(data []byte) (relPath, sha256hex string, err error) {
	sum := sha256.Sum256(data)
	sha256hex = hex.EncodeToString(sum[:])
	relPath = path.Join("blobs", sha256hex[0:2], sha256hex[2:4], sha256hex)
	full := filepath.Join(b.Dir, filepath.FromSlash(relPath))
	if _, err := os.Stat(full); err == nil {
		// Stored again: fresh again, so a concurrent gc leaves it for the
		// row about to refer to it.
		now := time.Now()
		_ = os.Chtimes(full, now, now)
		return relPath, sha256hex, nil
	}
	dir := filepath.Dir(full)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+sha256hex[:8]+"-*")
	if err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), full); err != nil {
		return "", "", fmt.Errorf("put blob: %w", err)
	}
	return relPath, sha256hex, nil
}

// Open opens a blob by the relative path Put returned. Paths that leave the
// blob directory are refused.
func (b Blobs) Open(relPath string) (io.ReadCloser, error) {
	clean := path.Clean(relPath)
	if !strings.HasPrefix(clean, "blobs/") || !fs.ValidPath(clean) {
		return nil, fmt.Errorf("open blob %q: not a blob path", relPath)
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

// GC removes the blobs no row refers to (refs, from Store.BlobRefs) whose
// files are older than notAfter, and the temporary files of interrupted
// writes older than notAfter. Younger unreferenced blobs stay: a running
// crawl writes its blobs before the rows that refer to them. With dryRun
// nothing is removed.
func (b Blobs) GC(refs map[string]bool, notAfter time.Time, dryRun bool) (GCResult, error) {
	var res GCResult
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
			res.Kept++
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
		return res, fmt.Errorf("collect blobs in %s: %w", root, err)
	}
	return res, nil
}
