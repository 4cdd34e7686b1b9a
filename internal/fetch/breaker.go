package fetch

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"zhizhi/internal/model"
)

// HostStateStore persists per-host politeness state so that a restart
// forgives nothing. internal/store implements it.
type HostStateStore interface {
	// GetHostState returns the stored state, or a zero state with Host set
	// when the host has none yet.
	GetHostState(ctx context.Context, host string) (model.HostState, error)
	PutHostState(ctx context.Context, s model.HostState) error
}

// HostHealth is the backoff and breaker part of model.HostState, with the
// rules that move it. It mirrors the model's fields one to one.
type HostHealth struct {
	Host              string
	ConsecutiveErrors int
	BackoffUntil      *time.Time
	BreakerUntil      *time.Time
	BreakerTrips      []time.Time
	NeedsReview       bool
}

// HealthFromState takes the health fields of a stored host state.
func HealthFromState(s model.HostState) HostHealth {
	return HostHealth{
		Host:              s.Host,
		ConsecutiveErrors: s.ConsecutiveErrors,
		BackoffUntil:      s.BackoffUntil,
		BreakerUntil:      s.BreakerUntil,
		BreakerTrips:      append([]time.Time(nil), s.BreakerTrips...),
		NeedsReview:       s.NeedsReview,
	}
}

// ApplyTo writes the health fields into s, leaving its robots fields alone.
func (h HostHealth) ApplyTo(s *model.HostState) {
	s.Host = h.Host
	s.ConsecutiveErrors = h.ConsecutiveErrors
	s.BackoffUntil = h.BackoffUntil
	s.BreakerUntil = h.BreakerUntil
	s.BreakerTrips = append([]time.Time(nil), h.BreakerTrips...)
	s.NeedsReview = h.NeedsReview
}

// RecordSuccess forgets the error run: the next error starts at k = 1.
// Past breaker trips stay, so the review rule still sees them.
func (h *HostHealth) RecordSuccess() {
	h.ConsecutiveErrors = 0
	h.BackoffUntil = nil
}

// Failure is what one more error did to a host.
type Failure struct {
	K           int           // consecutive errors now
	Delay       time.Duration // wait before the next request
	Tripped     bool          // this error opened the breaker
	NeedsReview bool          // this trip flagged the host for review
}

// RecordFailure counts one more consecutive error at now. The wait is
// BackoffDelay(k), or retryAfter if the site asked for longer. The
// BreakerThreshold-th consecutive error opens the breaker for
// BreakerOpenFor. Only a success resets the count, so once the breaker
// releases a single further error opens it again (half-open). A trip that
// makes BreakerReviewTrips within BreakerReviewWindow sets NeedsReview,
// which stays until a person clears it.
func (h *HostHealth) RecordFailure(now time.Time, retryAfter time.Duration) Failure {
	h.ConsecutiveErrors++
	f := Failure{K: h.ConsecutiveErrors, Delay: BackoffDelay(h.ConsecutiveErrors)}
	if retryAfter > f.Delay {
		f.Delay = retryAfter
	}
	until := now.Add(f.Delay)
	h.BackoffUntil = &until
	if h.ConsecutiveErrors >= BreakerThreshold {
		open := now.Add(BreakerOpenFor)
		h.BreakerUntil = &open
		f.Tripped = true
		// Keep only the trips the review window can still see.
		kept := h.BreakerTrips[:0]
		for _, t := range h.BreakerTrips {
			if now.Sub(t) < BreakerReviewWindow {
				kept = append(kept, t)
			}
		}
		h.BreakerTrips = append(kept, now)
		if len(h.BreakerTrips) >= BreakerReviewTrips && !h.NeedsReview {
			h.NeedsReview = true
			f.NeedsReview = true
		}
	}
	return f
}

// BlockedError says a host may not be asked now, and until when.
type BlockedError struct {
	Host   string
	Until  time.Time
	Reason string // "breaker open" or "backing off"
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: %s until %s", e.Host, e.Reason, e.Until.UTC().Format(time.RFC3339))
}

// Blocked returns a *BlockedError while the breaker is open or a backoff is
// running at now, else nil.
func (h HostHealth) Blocked(now time.Time) *BlockedError {
	if h.BreakerUntil != nil && now.Before(*h.BreakerUntil) {
		return &BlockedError{Host: h.Host, Until: *h.BreakerUntil, Reason: "breaker open"}
	}
	if h.BackoffUntil != nil && now.Before(*h.BackoffUntil) {
		return &BlockedError{Host: h.Host, Until: *h.BackoffUntil, Reason: "backing off"}
	}
	return nil
}

// HealthTracker applies the backoff and breaker rules to hosts whose state
// lives in a HostStateStore. It reads the store on every call, so several
// workers and a restarted process all see the same truth.
type HealthTracker struct {
	Clock Clock
	Store HostStateStore
}

// Check returns the host's health and a *BlockedError if it may not be
// asked now.
func (t *HealthTracker) Check(ctx context.Context, host string) (HostHealth, error) {
	s, err := t.Store.GetHostState(ctx, host)
	if err != nil {
		return HostHealth{}, fmt.Errorf("check host %s: %w", host, err)
	}
	s.Host = host
	h := HealthFromState(s)
	if b := h.Blocked(t.Clock.Now()); b != nil {
		return h, b
	}
	return h, nil
}

// Record folds the outcome of one request into the host's stored state:
// a success resets the error run; an error (CountsAsError) backs off,
// honouring Retry-After on 429 and 503, and may open the breaker. Outcomes
// that say nothing about the host leave the state as it is.
func (t *HealthTracker) Record(ctx context.Context, host string, status int, header http.Header, reqErr error) (HostHealth, Failure, error) {
	s, err := t.Store.GetHostState(ctx, host)
	if err != nil {
		return HostHealth{}, Failure{}, fmt.Errorf("record host %s: %w", host, err)
	}
	s.Host = host
	h := HealthFromState(s)
	now := t.Clock.Now()
	var f Failure
	switch {
	case CountsAsError(status, reqErr):
		var ra time.Duration
		if reqErr == nil && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && header != nil {
			ra, _ = ParseRetryAfter(header.Get("Retry-After"), now)
		}
		f = h.RecordFailure(now, ra)
	case reqErr == nil:
		if h.ConsecutiveErrors == 0 && h.BackoffUntil == nil {
			// Nothing to forget: spare the store a write per request.
			return h, f, nil
		}
		h.RecordSuccess()
	default:
		return h, f, nil
	}
	h.ApplyTo(&s)
	s.UpdatedAt = now
	if err := t.Store.PutHostState(ctx, s); err != nil {
		return h, f, fmt.Errorf("record host %s: %w", host, err)
	}
	return h, f, nil
}
