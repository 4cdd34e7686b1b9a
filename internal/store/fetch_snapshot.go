package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"
)

// FetchSnapshot is the last answer the acquisition API stored for a URL:
// what came back and where its raw bytes are kept (a blob).
type FetchSnapshot struct {
	URL         string // as requested
	FinalURL    string // after redirects
	Status      int
	ContentType string
	RawPath     string // blob path
	RawSHA256   string
	RawBytes    int64
	WireBytes   int64
	Duration    time.Duration
	Tier        string
	FetchedAt   time.Time
}

// SaveFetchSnapshot stores body as a blob and records it as url's
// snapshot, replacing the one before. The blob is written first: a row
// never names bytes that are not there.
func (s *Store) SaveFetchSnapshot(ctx context.Context, snap *FetchSnapshot, body []byte) error {
	p, sum, err := s.Blobs().Put(ctx, body)
	if err != nil {
		return fmt.Errorf("save fetch snapshot of %s: %w", snap.URL, err)
	}
	snap.RawPath, snap.RawSHA256, snap.RawBytes = p, sum, int64(len(body))
	_, err = s.conn().exec(ctx, `INSERT INTO fetch_snapshot (url, final_url, status, content_type, raw_path,
		raw_sha256, raw_bytes, wire_bytes, duration_ms, tier, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (url) DO UPDATE SET final_url = excluded.final_url, status = excluded.status,
		content_type = excluded.content_type, raw_path = excluded.raw_path, raw_sha256 = excluded.raw_sha256,
		raw_bytes = excluded.raw_bytes, wire_bytes = excluded.wire_bytes, duration_ms = excluded.duration_ms,
		tier = excluded.tier, fetched_at = excluded.fetched_at`,
		snap.URL, snap.FinalURL, snap.Status, clipRunes(snap.ContentType, 300), snap.RawPath, snap.RawSHA256,
		snap.RawBytes, snap.WireBytes, snap.Duration.Milliseconds(), snap.Tier, s.ts(snap.FetchedAt))
	if err != nil {
		return fmt.Errorf("save fetch snapshot of %s: %w", snap.URL, err)
	}
	return nil
}

// FetchSnapshot returns url's snapshot and its raw bytes, ErrNotFound when
// there is none (or its blob is gone).
func (s *Store) FetchSnapshot(ctx context.Context, url string) (*FetchSnapshot, []byte, error) {
	var snap FetchSnapshot
	var ms int64
	err := s.conn().queryRow(ctx, `SELECT url, final_url, status, content_type, raw_path, raw_sha256, raw_bytes,
		wire_bytes, duration_ms, tier, fetched_at FROM fetch_snapshot WHERE url = ?`, url).Scan(
		&snap.URL, &snap.FinalURL, &snap.Status, &snap.ContentType, &snap.RawPath, &snap.RawSHA256, &snap.RawBytes,
		&snap.WireBytes, &ms, &snap.Tier, timeCol{&snap.FetchedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetch snapshot of %s: %w", url, err)
	}
	snap.Duration = time.Duration(ms) * time.Millisecond
	r, err := s.Blobs().Open(ctx, snap.RawPath)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch snapshot of %s: %w", url, err)
	}
	defer r.Close()
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch snapshot of %s: %w", url, err)
	}
	return &snap, body, nil
}
