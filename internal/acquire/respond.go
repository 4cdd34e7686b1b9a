package acquire

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Error codes of the answers (Firecrawl's where it has one).
const (
	CodeInvalidRequest     = "invalid_request"
	CodeRobotsDisallowed   = "ROBOTS_DISALLOWED"
	CodeRobotsUnavailable  = "ROBOTS_UNAVAILABLE"
	CodeURLRefused         = "URL_REFUSED"
	CodeHostBlocked        = "HOST_BLOCKED"
	CodeTimeout            = "SCRAPE_TIMEOUT"
	CodeSiteError          = "SCRAPE_SITE_ERROR"
	CodeTooLarge           = "CONTENT_TOO_LARGE"
	CodeUnsupportedContent = "UNSUPPORTED_CONTENT_TYPE"
	CodeInternal           = "INTERNAL_ERROR"
)

// failure is an answer with success false: the status, a code, plain
// words saying what went wrong and what to do, and when to ask again.
type failure struct {
	status     int
	code       string
	msg        string
	retryAfter time.Duration // > 0: sent as Retry-After
	details    map[string]any
	// notSent: refused before anything was sent to the page's host
	// (robots.txt, the SSRF guard, the breaker, a bad request), so it is
	// billed nothing. wireBytes: what was downloaded, when it was sent.
	notSent   bool
	wireBytes int64
}

func (f *failure) Error() string { return f.code + ": " + f.msg }

func invalid(format string, args ...any) *failure {
	return &failure{status: http.StatusBadRequest, code: CodeInvalidRequest, msg: fmt.Sprintf(format, args...), notSent: true}
}

type errorBody struct {
	Success bool           `json:"success"`
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Details map[string]any `json:"details,omitempty"`
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, f *failure) {
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(f.retryAfter.Seconds())), 10))
	}
	if f.code == CodeInternal {
		a.d.Logger.Error("acquire fetch", "path", r.URL.Path, "code", f.code, "error", f.msg)
	}
	writeJSON(w, f.status, errorBody{Error: f.msg, Code: f.code, Details: f.details})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
