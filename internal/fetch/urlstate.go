package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Recheck bounds: next check = clamp(1.5 × mean observed
// change interval, 1 h, 30 d).
const (
	MinRecheck = time.Hour
	MaxRecheck = 30 * 24 * time.Hour
	// keptIntervals is how many change intervals url_state remembers: the
	// mean follows how a page behaves now, not years ago.
	keptIntervals = 16
)

// NextCheckIn is how long to wait before checking a URL again:
// 1.5 × the mean of the observed change intervals (seconds), clamped to
// [MinRecheck, MaxRecheck]. With no change observed yet, the time since
// the URL was first seen stands in for the interval: a page unchanged for
// that long changes at most that often.
func NextCheckIn(intervals []int64, sinceChange time.Duration) time.Duration {
	var mean time.Duration
	if len(intervals) > 0 {
		var sum int64
		for _, s := range intervals {
			sum += s
		}
		mean = time.Duration(sum/int64(len(intervals))) * time.Second
	} else {
		mean = sinceChange
	}
	d := mean * 3 / 2
	return min(max(d, MinRecheck), MaxRecheck)
}

func (c *Client) urlState(ctx context.Context, rawURL string) (model.URLState, error) {
	st, err := c.store.GetURLState(ctx, store.URLHash(rawURL))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return st, fmt.Errorf("conditional request for %s: %w", rawURL, err)
	}
	return st, nil
}

// noteURLState folds a 200 or 304 into url_state: validators, content
// hash, when it last changed, the observed change intervals and the next
// check. prev is the state read for a conditional request, if any.
func (c *Client) noteURLState(ctx context.Context, rawURL string, resp *Response, prev *model.URLState) error {
	var st model.URLState
	if prev != nil {
		st = *prev
	} else {
		var err error
		if st, err = c.urlState(ctx, rawURL); err != nil {
			return err
		}
	}
	now := c.clock.Now().UTC()
	st.URL = rawURL
	st.URLHash = store.URLHash(rawURL)
	st.LastCheckedAt = &now
	if !resp.NotModified {
		if v := resp.Header.Get("ETag"); v != "" {
			st.ETag = v
		}
		if v := resp.Header.Get("Last-Modified"); v != "" {
			st.LastModified = v
		}
		if !resp.Truncated {
			st.ContentLength = int64(len(resp.Body))
		}
		sum := sha256.Sum256(resp.Body)
		hash := hex.EncodeToString(sum[:])
		if hash != st.ContentHash {
			if st.ContentHash != "" && st.LastChangedAt != nil {
				if iv := int64(now.Sub(*st.LastChangedAt) / time.Second); iv > 0 {
					st.ChangeIntervals = append(st.ChangeIntervals, iv)
					if n := len(st.ChangeIntervals); n > keptIntervals {
						st.ChangeIntervals = st.ChangeIntervals[n-keptIntervals:]
					}
				}
			}
			st.ContentHash = hash
			st.LastChangedAt = &now
		}
	}
	var since time.Duration
	if st.LastChangedAt != nil {
		since = now.Sub(*st.LastChangedAt)
	}
	next := now.Add(NextCheckIn(st.ChangeIntervals, since))
	st.NextCheckAt = &next
	if err := c.store.PutURLState(ctx, &st); err != nil {
		return err
	}
	return nil
}
