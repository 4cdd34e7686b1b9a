package budget

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"zhizhi/internal/auth"
)

// RateLimit limits each API key to its requests per minute (Limits,
// Defaults.RequestsPerMinute unless set), counted per whole UTC minute in
// the database, so the limit holds for the key across every serve process.
// Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset (Unix seconds when the minute ends); a request over the
// limit is answered 429 with Retry-After and never reaches next. Requests
// with no key on the context (a console session, or no caller: next
// decides) pass unmetered. It needs auth.Service.Middleware before it.
func (s *Service) RateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok || p.APIKeyID == 0 {
			next.ServeHTTP(w, r)
			return
		}
		lim, err := s.Limits(r.Context(), p.APIKeyID)
		if err != nil {
			internalError(w, r, err)
			return
		}
		now := s.clock()
		start := now.Truncate(time.Minute)
		reset := start.Add(time.Minute)
		n, err := s.st.HitRateWindow(r.Context(), p.APIKeyID, start)
		if err != nil {
			internalError(w, r, err)
			return
		}
		perMin := lim.RequestsPerMinute
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.FormatInt(perMin, 10))
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(max(0, perMin-n), 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		if n > perMin {
			wait := int64(math.Ceil(reset.Sub(now).Seconds()))
			h.Set("Retry-After", strconv.FormatInt(max(1, wait), 10))
			writeFailure(w, http.StatusTooManyRequests, "RATE_LIMITED",
				fmt.Sprintf("rate limit: this API key may make %d requests a minute; try again in %d seconds", perMin, max(1, wait)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
