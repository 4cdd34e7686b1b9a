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
	// BlockReason is BlockCaptcha while the host is stopped until a person
	// clears it; empty otherwise.
	BlockReason string
}

// BlockCaptcha is the BlockReason of a host that answered with a CAPTCHA:
// zhizhi never solves one, and does not ask the host again (in any
// process, after any restart) until a person has looked and cleared it.
const BlockCaptcha = "captcha"

// HealthFromState takes the health fields of a stored host state.
func HealthFromState(s model.HostState) HostHealth {
	return HostHealth{
		Host:              s.Host,
		ConsecutiveErrors: s.ConsecutiveErrors,
		BackoffUntil:      s.BackoffUntil,
		BreakerUntil:      s.BreakerUntil,
		BreakerTrips:      append([]time.Time(nil), s.BreakerTrips...),
		NeedsReview:       s.NeedsReview,
		BlockReason:       s.BlockReason,
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
	s.BlockReason = h.BlockReason
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
	// Cause is BlockCaptcha for a host stopped by a CAPTCHA (Reason is
	// then "breaker open": a stop, not a wait), with no end but a person's
	// decision; Until is the earliest such a person's review could matter.
	Cause string
	Since time.Time // when the CAPTCHA was met, for Cause BlockCaptcha
}

func (e *BlockedError) Error() string {
	if e.Cause == BlockCaptcha {
		return fmt.Sprintf("%s: stopped since %s because the site answered with a CAPTCHA, which zhizhi never solves; "+
			"nothing more is asked of this host until a person has looked at the site and cleared the block "+
			"(store.ClearHostBlock, or in the database: UPDATE host_state SET block_reason = NULL, breaker_until = NULL, "+
			"needs_review = false WHERE host = '%s')", e.Host, e.Since.UTC().Format(time.RFC3339), e.Host)
	}
	return fmt.Sprintf("%s: %s until %s", e.Host, e.Reason, e.Until.UTC().Format(time.RFC3339))
}

// Is makes a CAPTCHA block match ErrCaptcha, so callers that stop at a
// CAPTCHA page stop at the remembered one too.
func (e *BlockedError) Is(target error) bool {
	return target == ErrCaptcha && e.Cause == BlockCaptcha
}

// Blocked returns a *BlockedError while the host is stopped by a CAPTCHA,
// the breaker is open or a backoff is running at now, else nil.
func (h HostHealth) Blocked(now time.Time) *BlockedError {
	if h.BlockReason == BlockCaptcha {
		e := &BlockedError{Host: h.Host, Reason: "breaker open", Cause: BlockCaptcha, Until: now}
		if h.BreakerUntil != nil {
			e.Until = *h.BreakerUntil
			e.Since = h.BreakerUntil.Add(-BreakerOpenFor)
		}
		return e
	}
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

// RecordCaptcha remembers that host answered with a CAPTCHA: the host is
// stopped (BlockCaptcha) and flagged for review, and the breaker is open
// for at least BreakerOpenFor, so every process refuses it until a person
// clears the block.
func (t *HealthTracker) RecordCaptcha(ctx context.Context, host string) (HostHealth, error) {
	s, err := t.Store.GetHostState(ctx, host)
	if err != nil {
		return HostHealth{}, fmt.Errorf("record captcha at %s: %w", host, err)
	}
	s.Host = host
	h := HealthFromState(s)
	now := t.Clock.Now()
	h.BlockReason = BlockCaptcha
	h.NeedsReview = true
	if until := now.Add(BreakerOpenFor); h.BreakerUntil == nil || h.BreakerUntil.Before(until) {
		h.BreakerUntil = &until
	}
	h.ApplyTo(&s)
	s.UpdatedAt = now
	if err := t.Store.PutHostState(ctx, s); err != nil {
		return h, fmt.Errorf("record captcha at %s: %w", host, err)
	}
	return h, nil
}
