package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// With PostgreSQL a blob is one row of blob (its size, how many parts, when
// it was first and last stored) and its bytes in parts of blobChunkSize in
// blob_chunk. Parts rather than one bytea value because an attachment may
// be 50 MiB: a single value would be built whole in the driver's buffers on
// the way in and read whole on the way out, per reader; in parts, writing
// and reading hold one part at a time beyond the caller's own copy.
const blobChunkSize = 1 << 20

// blobPutAttempts bounds the retries of a Put that keeps losing a race with
// a gc that removes the blob between "it is there" and "mark it fresh".
const blobPutAttempts = 3

// putBlob stores data under sum unless it is there already. Header and parts
// are written in one transaction, so a reader sees all of a blob or none.
// Two processes storing the same bytes at once do not fail: the second
// INSERT waits for the first's transaction and then finds the row.
func (s *Store) putBlob(ctx context.Context, sum string, data []byte) error {
	return s.putBlobParts(ctx, sum, int64(len(data)), func(i int, _ []byte) ([]byte, error) {
		return data[i*blobChunkSize : min((i+1)*blobChunkSize, len(data))], nil
	})
}

// putBlobParts is putBlob for size bytes given part by part: part(i, buf)
// returns the i-th blobChunkSize bytes (buf may hold them), so a large
// file is stored without being held in memory whole.
func (s *Store) putBlobParts(ctx context.Context, sum string, size int64, part func(i int, buf []byte) ([]byte, error)) error {
	now := s.ts(s.now())
	chunks := int((size + blobChunkSize - 1) / blobChunkSize)
	buf := make([]byte, 0, min(size, blobChunkSize))
	for range blobPutAttempts {
		// Stored already: fresh again, so a concurrent gc leaves it for the
		// row about to refer to it. GREATEST: another worker's clock may be
		// ahead, and freshness must not move back.
		res, err := s.conn().exec(ctx, `UPDATE blob SET stored_at = GREATEST(stored_at, ?) WHERE sha256 = ?`, now, sum)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			return nil
		}
		inserted := false
		err = s.WithTx(ctx, func(tx *Tx) error {
			res, err := tx.c.exec(ctx, `INSERT INTO blob (sha256, size, chunks, created_at, stored_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (sha256) DO NOTHING`, sum, size, chunks, now, now)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // another process stored it first
			}
			for i := range chunks {
				p, err := part(i, buf[:0])
				if err != nil {
					return err
				}
				if _, err := tx.c.exec(ctx, `INSERT INTO blob_chunk (sha256, seq, data) VALUES (?, ?, ?)`, sum, i, p); err != nil {
					return err
				}
			}
			inserted = true
			return nil
		})
		if err != nil || inserted {
			return err
		}
	}
	return fmt.Errorf("blob %s was removed each time it was stored (is gc running with a grace of 0?)", sum)
}

// openBlob returns a reader of the blob sum, or ErrNotFound.
func (s *Store) openBlob(ctx context.Context, sum string) (io.ReadCloser, error) {
	r := &blobReader{ctx: ctx, s: s, sum: sum, hash: sha256.New()}
	err := s.conn().queryRow(ctx, `SELECT size, chunks FROM blob WHERE sha256 = ?`, sum).Scan(&r.size, &r.chunks)
	if err != nil {
		return nil, notFound(err)
	}
	return r, nil
}

// blobReader reads a blob part by part, one short query each, so that it
// holds no connection between reads and one part of memory at most. It
// checks length and SHA-256 at the end: a blob removed or damaged while it
// was read is an error, never a silently short file.
type blobReader struct {
	ctx    context.Context
	s      *Store
	sum    string
	size   int64
	chunks int
	next   int   // the next part to fetch
	read   int64 // bytes fetched so far
	hash   hash.Hash
	part   []byte // reused for every part
	buf    []byte // the unread rest of part
	err    error
}

func (r *blobReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.next == r.chunks {
			r.err = r.finish()
			continue
		}
		if err := r.fetch(); err != nil {
			r.err = fmt.Errorf("read blob %s: %w", r.sum, err)
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *blobReader) fetch() error {
	rows, err := r.s.conn().query(r.ctx, `SELECT data FROM blob_chunk WHERE sha256 = ? AND seq = ?`, r.sum, r.next)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return fmt.Errorf("part %d of %d is missing (removed while being read?): %w", r.next+1, r.chunks, io.ErrUnexpectedEOF)
	}
	var raw sql.RawBytes
	if err := rows.Scan(&raw); err != nil {
		return err
	}
	r.part = append(r.part[:0], raw...)
	if err := rows.Close(); err != nil {
		return err
	}
	r.hash.Write(r.part)
	r.read += int64(len(r.part))
	r.buf = r.part
	r.next++
	return nil
}

func (r *blobReader) finish() error {
	if r.read != r.size {
		return fmt.Errorf("read blob %s: %d bytes, want %d: %w", r.sum, r.read, r.size, io.ErrUnexpectedEOF)
	}
	if got := hex.EncodeToString(r.hash.Sum(nil)); got != r.sum {
		return fmt.Errorf("read blob %s: the stored bytes have SHA-256 %s", r.sum, got)
	}
	return io.EOF
}

func (r *blobReader) Close() error {
	r.err, r.buf = errors.New("read blob: reader closed"), nil
	return nil
}

// gcBlobs removes the database's blobs that no row refers to and that were
// last stored before notAfter, and returns the paths of the referenced ones.
func (s *Store) gcBlobs(ctx context.Context, refs map[string]bool, notAfter time.Time, dryRun bool, res *GCResult) (map[string]bool, error) {
	notAfter = notAfter.UTC().Truncate(time.Microsecond)
	rows, err := s.conn().query(ctx, `SELECT sha256, size, stored_at FROM blob`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type candidate struct {
		sum  string
		size int64
	}
	var old []candidate
	kept := map[string]bool{}
	for rows.Next() {
		var c candidate
		var stored time.Time
		if err := rows.Scan(&c.sum, &c.size, timeCol{&stored}); err != nil {
			return nil, err
		}
		switch rel := blobPath(c.sum); {
		case refs[rel]:
			kept[rel] = true
			res.Kept++
		case stored.After(notAfter):
			res.Young++
		default:
			old = append(old, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if s.afterBlobScan != nil {
		s.afterBlobScan()
	}
	for _, c := range old {
		if !dryRun {
			// Only if still old: a Put since the scan has a row about to
			// refer to it. The parts go with it (ON DELETE CASCADE).
			r, err := s.conn().exec(ctx, `DELETE FROM blob WHERE sha256 = ? AND stored_at <= ?`, c.sum, s.ts(notAfter))
			if err != nil {
				return nil, err
			}
			if n, err := r.RowsAffected(); err != nil {
				return nil, err
			} else if n == 0 {
				res.Young++
				continue
			}
		}
		res.Removed++
		res.RemovedBytes += c.size
		res.RemovedPaths = append(res.RemovedPaths, blobPath(c.sum))
	}
	return kept, nil
}
