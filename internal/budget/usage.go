package budget

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"zhizhi/internal/auth"
)

// Meter is one budget of one day: its limit, what settled requests were
// charged, what requests in flight hold, and what is left.
type Meter struct {
	Limit     int64 `json:"limit"`
	Used      int64 `json:"used"`
	Reserved  int64 `json:"reserved"`
	Remaining int64 `json:"remaining"`
}

// Usage is one key's spending today.
type Usage struct {
	Day               string    `json:"day"` // YYYY-MM-DD, UTC+8
	ResetsAt          time.Time `json:"resets_at"`
	Requests          Meter     `json:"requests"`
	Bytes             Meter     `json:"bytes"`
	BrowserSeconds    Meter     `json:"browser_seconds"`
	OCRPages          Meter     `json:"ocr_pages"`
	RequestsPerMinute int64     `json:"requests_per_minute"`
}

// Usage reports key keyID's spending today (UTC+8).
func (s *Service) Usage(ctx context.Context, keyID int64) (Usage, error) {
	lim, err := s.Limits(ctx, keyID)
	if err != nil {
		return Usage{}, fmt.Errorf("budget usage: %w", err)
	}
	now := s.clock()
	day := Day(now)
	used, held, err := s.st.BudgetDay(ctx, keyID, day, now)
	if err != nil {
		return Usage{}, fmt.Errorf("budget usage: %w", err)
	}
	meter := func(limit, used, held int64) Meter {
		return Meter{Limit: limit, Used: used, Reserved: held, Remaining: max(0, limit-used-held)}
	}
	l := lim.PerDay
	return Usage{
		Day:               day,
		ResetsAt:          dayEnd(now),
		Requests:          meter(l.Requests, used.Requests, held.Requests),
		Bytes:             meter(l.Bytes, used.Bytes, held.Bytes),
		BrowserSeconds:    meter(l.BrowserSeconds, used.BrowserSeconds, held.BrowserSeconds),
		OCRPages:          meter(l.OCRPages, used.OCRPages, held.OCRPages),
		RequestsPerMinute: lim.RequestsPerMinute,
	}, nil
}

// UsageHandler answers GET /v1/usage with the calling key's usage today,
// {"success": true, "data": Usage}. The key is the authenticated principal
// on the request's context (auth.Service.Middleware puts it there), never
// a parameter, so a key sees only its own usage. It needs the acquire
// scope; a console session has no budget of its own and is refused.
func (s *Service) UsageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		switch {
		case !ok:
			writeFailure(w, http.StatusUnauthorized, "UNAUTHORIZED", `send an API key as "Authorization: Bearer zk_…"`)
			return
		case p.APIKeyID == 0:
			writeFailure(w, http.StatusForbidden, "FORBIDDEN", "usage is counted per API key: call this with the key whose usage you want")
			return
		case !p.Allows(auth.ScopeAcquire):
			writeFailure(w, http.StatusForbidden, "FORBIDDEN", `this API key lacks the "acquire" scope, and so has no budget; create a key with --scope acquire`)
			return
		}
		u, err := s.Usage(r.Context(), p.APIKeyID)
		if err != nil {
			internalError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, envelope{Success: true, Data: u})
	})
}
