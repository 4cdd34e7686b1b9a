package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"zhizhi/internal/browser"
	"zhizhi/internal/charset"
)

// Tiers of fetching, stored with the seed's names.
const (
	TierDirect  = "httpx"
	TierBrowser = "playwright"
)

// Request is one polite fetch. Every request, whatever its purpose, goes
// through the same guard, robots, limiter and breaker, and lands in
// crawl_log.
type Request struct {
	URL     string
	Method  string // GET (default) or HEAD
	Purpose string // model.Purpose*: robots, index, list, detail, attachment, probe
	Accept  string // Accept header; a sensible default when empty

	SiteID   *int64 // for crawl_log
	TargetID *int64

	// Conditional sends If-None-Match / If-Modified-Since from url_state
	// and records the answer's validators back; a 304 comes back as
	// NotModified with no body.
	Conditional bool

	// MaxBytes caps the body; 0 means the client's default. With Head set,
	// reading stops quietly at MaxBytes (Truncated) instead of failing: the
	// byte-capped head read of summary-access sites.
	MaxBytes int64
	Head     bool

	// Tier forces a tier: "" lets the host policy decide (direct, or the
	// browser for browser-strategy hosts and challenged answers).
	Tier string

	// NoRedirects returns a redirect as it came (its Location unfollowed),
	// for a caller that judges each hop itself: a crawl job follows only
	// the redirects that stay in its scope.
	NoRedirects bool
	// BeforeSend, when set, is called on the direct tier once the request
	// has passed every gate (guard, robots.txt, breaker, the host's turn)
	// and just before it leaves; an error stops it unsent. A crawl job
	// records there that the page was asked for, so that a process killed
	// at any moment never leaves it unclear whether a page was asked.
	BeforeSend func(ctx context.Context) error
}

// Response is what came back.
type Response struct {
	URL         string // final URL after redirects
	Status      int
	Header      http.Header
	Body        []byte // content-decoded bytes as served (charset untouched)
	NotModified bool   // 304 to a conditional request
	Truncated   bool   // a head read stopped at MaxBytes
	// Challenged: the answer is the site's cookie challenge (its
	// resilience rules say so), returned as it is because the request
	// forced the direct tier; it is not the page.
	Challenged bool
	Tier       string // TierDirect or TierBrowser: the tier actually used
	WireBytes  int64  // bytes on the wire
	Duration   time.Duration
	// Subrequests are, on the browser tier, every request the page made
	// or was refused, in the order Chromium started them (the page's own
	// document first); nil on the direct tier.
	Subrequests []browser.RequestRecord
}

// HTML returns the body transcoded to UTF-8 (BOM, Content-Type, <meta>, then detection).
func (r *Response) HTML() ([]byte, string, error) {
	return charset.DecodeHTML(r.Body, r.Header.Get("Content-Type"))
}

// CharsetNote says when the declared charset was overruled by the bytes
// (see charset.Note); "" otherwise.
func (r *Response) CharsetNote() string {
	return charset.Note(r.Body, r.Header.Get("Content-Type"))
}

// Text returns a non-HTML text body (JSON, plain text) as UTF-8.
func (r *Response) Text() ([]byte, string, error) {
	return charset.DecodeText(r.Body, r.Header.Get("Content-Type"))
}

// RobotsError is a request refused by robots.txt; it names the deciding
// rule so a person can see why (`blocked by robots.txt line 7 "Disallow: /zwgk/"`).
type RobotsError struct {
	URL  string
	Rule string // the rule line as written, e.g. "Disallow: /zwgk/"; empty when robots.txt itself failed
	Line int
	Why  string // a refusal decided by no rule, e.g. the file could not be read
	// Unreachable: robots.txt could not be read (network error, 5xx, 429),
	// so the whole host is refused; Why is then the whole sentence.
	Unreachable bool
	// RetryAt: when an unreachable robots.txt is asked for again.
	RetryAt time.Time
}

func (e *RobotsError) Error() string {
	if e.Unreachable {
		return e.Why
	}
	if e.Why != "" {
		return fmt.Sprintf("blocked by robots.txt: %s", e.Why)
	}
	return fmt.Sprintf("blocked by robots.txt line %d %q", e.Line, e.Rule)
}

// IsRobotsDisallowed reports whether err is a robots.txt refusal.
func IsRobotsDisallowed(err error) bool {
	var re *RobotsError
	return errors.As(err, &re)
}

// IsHostStop reports errors after which nothing more should be asked of the
// host in this run: its breaker is open, it asked for a CAPTCHA, or its
// robots.txt could not be read (fail-closed).
func IsHostStop(err error) bool {
	var be *BlockedError
	if errors.As(err, &be) && be.Reason == "breaker open" {
		return true
	}
	var re *RobotsError
	if errors.As(err, &re) && re.Why != "" {
		return true
	}
	return errors.Is(err, ErrCaptcha)
}

// ErrCaptcha: the site asked for a CAPTCHA. zhizhi never solves one; the
// host is left alone until a person looks.
var ErrCaptcha = errors.New("the site answered with a CAPTCHA: stopped (zhizhi never bypasses one)")
