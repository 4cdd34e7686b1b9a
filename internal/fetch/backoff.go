package fetch

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff and breaker numbers. Sites may make
// them stricter, never looser.
const (
	// BackoffBase is T₀ in T(k) = T₀·2^k.
	BackoffBase = 2 * time.Second
	// BackoffMaxExponent caps k, so the longest backoff is 2 s·2^5 = 64 s.
	BackoffMaxExponent = 5
	// BreakerThreshold consecutive errors open the breaker.
	BreakerThreshold = 5
	// BreakerOpenFor is how long an open breaker stops all requests.
	BreakerOpenFor = 24 * time.Hour
	// BreakerReviewTrips trips within BreakerReviewWindow flag the host
	// for human review.
	BreakerReviewTrips  = 3
	BreakerReviewWindow = 7 * 24 * time.Hour
)

// BackoffDelay is the wait after the k-th consecutive error of a host:
// 2 s·2^min(k, 5). So k = 1, 2, 3, 4, 5 give 4, 8, 16, 32, 64 s, and any
// later k stays at 64 s. k ≤ 0 (no error) gives no wait.
func BackoffDelay(k int) time.Duration {
	if k <= 0 {
		return 0
	}
	if k > BackoffMaxExponent {
		k = BackoffMaxExponent
	}
	return BackoffBase << k
}

// CountsAsError reports whether an answer counts toward a host's backoff
// and breaker: 5xx, 429 and timeouts, as the seed says, and also any other
// failure to get an answer (refused connection, reset), because a host that
// cannot answer is a host to leave alone. Our own refusals (SSRF guard,
// size limits) and cancellations say nothing about the host and do not
// count.
func CountsAsError(status int, err error) bool {
	if err != nil {
		var re *RefusedError
		var tl *ErrTooLarge
		switch {
		case errors.As(err, &re), errors.As(err, &tl),
			errors.Is(err, ErrTooManyRedirects), errors.Is(err, context.Canceled) && !errors.Is(err, ErrTimeout):
			return false
		}
		return true
	}
	return status == http.StatusTooManyRequests || status >= 500
}

// ParseRetryAfter reads a Retry-After value, either delay-seconds or an
// HTTP date, relative to now. A date in the past means no wait.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Beyond a year the number is nonsense; a year is as good as never.
		const maxSecs = 365 * 24 * 3600
		if secs > maxSecs {
			secs = maxSecs
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}
