package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"zhizhi/internal/model"
)

// GetURLState returns the state of the URL with urlHash. A URL never seen
// gives a zero URLState (with URLHash set) and ErrNotFound.
func (s *Store) GetURLState(ctx context.Context, urlHash string) (model.URLState, error) {
	st := model.URLState{URLHash: urlHash}
	var simhash int64
	var intervals json.RawMessage
	var contentLength sql.NullInt64
	err := s.conn().queryRow(ctx, `SELECT url, etag, last_modified, content_hash, simhash, last_checked_at,
		last_changed_at, change_intervals, next_check_at, content_length FROM url_state WHERE url_hash = ?`, urlHash).
		Scan(&st.URL, strCol{&st.ETag}, strCol{&st.LastModified}, strCol{&st.ContentHash}, &simhash,
			nullTimeCol{&st.LastCheckedAt}, nullTimeCol{&st.LastChangedAt}, jsonCol{&intervals},
			nullTimeCol{&st.NextCheckAt}, &contentLength)
	if err != nil {
		return model.URLState{URLHash: urlHash}, fmt.Errorf("url state %s: %w", urlHash, notFound(err))
	}
	st.ContentLength = contentLength.Int64
	// simhash is unsigned; the column is a signed 64-bit integer holding the same bits.
	st.Simhash = uint64(simhash)
	if len(intervals) > 0 {
		if err := json.Unmarshal(intervals, &st.ChangeIntervals); err != nil {
			return st, fmt.Errorf("url state %s: change_intervals: %w", urlHash, err)
		}
	}
	return st, nil
}

// PutURLState inserts or replaces the state of st.URLHash (computed from
// st.URL when empty).
func (s *Store) PutURLState(ctx context.Context, st *model.URLState) error {
	if st.URLHash == "" {
		st.URLHash = URLHash(st.URL)
	}
	intervals := st.ChangeIntervals
	if intervals == nil {
		intervals = []int64{}
	}
	iv, err := json.Marshal(intervals)
	if err != nil {
		return fmt.Errorf("put url state: %w", err)
	}
	_, err = s.conn().exec(ctx, `INSERT INTO url_state (url_hash, url, etag, last_modified, content_hash,
		simhash, last_checked_at, last_changed_at, change_intervals, next_check_at, content_length)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (url_hash) DO UPDATE SET url = excluded.url, etag = excluded.etag,
			last_modified = excluded.last_modified, content_hash = excluded.content_hash,
			simhash = excluded.simhash, last_checked_at = excluded.last_checked_at,
			last_changed_at = excluded.last_changed_at, change_intervals = excluded.change_intervals,
			next_check_at = excluded.next_check_at, content_length = excluded.content_length`,
		st.URLHash, st.URL, nullStr(st.ETag), nullStr(st.LastModified), nullStr(st.ContentHash),
		int64(st.Simhash), s.tsPtr(st.LastCheckedAt), s.tsPtr(st.LastChangedAt), string(iv), s.tsPtr(st.NextCheckAt), st.ContentLength)
	if err != nil {
		return fmt.Errorf("put url state %s: %w", st.URL, err)
	}
	return nil
}
