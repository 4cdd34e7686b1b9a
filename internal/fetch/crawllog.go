package fetch

import (
	"context"
	"errors"
	"net/url"
	"time"

	"zhizhi/internal/model"
)

// Error classes written to crawl_log.error_class.
const (
	ClassRobots     = "robots"
	ClassSSRF       = "ssrf"
	ClassBreaker    = "breaker"
	ClassBackoff    = "backoff"
	ClassCaptcha    = "captcha"
	ClassChallenge  = "challenge"
	ClassNoBrowser  = "no_browser"
	ClassBrowser    = "browser"
	ClassBlocked    = "blocked" // a browser sub-request refused by the gate
	ClassTimeout    = "timeout"
	ClassTooLarge   = "too_large"
	ClassRedirects  = "redirects"
	ClassCanceled   = "canceled"
	ClassNetwork    = "network"
	ClassHTTPStatus = "http"
)

// ErrorClass names the kind of failure for crawl_log and reports.
func ErrorClass(status int, err error) string {
	var (
		re *RobotsError
		rf *RefusedError
		be *BlockedError
		tl *ErrTooLarge
	)
	switch {
	case err == nil && (status == 0 || status < 400):
		return ""
	case err == nil:
		return ClassHTTPStatus
	case errors.As(err, &re):
		return ClassRobots
	case errors.As(err, &rf):
		return ClassSSRF
	case errors.As(err, &be):
		if be.Reason == "breaker open" {
			return ClassBreaker
		}
		return ClassBackoff
	case errors.Is(err, ErrCaptcha):
		return ClassCaptcha
	case errors.Is(err, errChallenge), errors.Is(err, ErrChallengeNotCleared):
		return ClassChallenge
	case errors.Is(err, ErrNoBrowser):
		return ClassNoBrowser
	case errors.Is(err, ErrTimeout):
		return ClassTimeout
	case errors.As(err, &tl):
		return ClassTooLarge
	case errors.Is(err, ErrTooManyRedirects):
		return ClassRedirects
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ClassCanceled
	case errors.Is(err, errGate):
		return ClassBlocked
	case errors.Is(err, errBrowser):
		return ClassBrowser
	}
	return ClassNetwork
}

// logRow writes one crawl_log row at once (outside any transaction, so a
// crash loses none). A failure to log is logged, not returned: the request
// has happened either way.
func (c *Client) logRow(ctx context.Context, req Request, u *url.URL, tier string, at time.Time, status int, wire int64, dur time.Duration, err error) {
	c.logRowSaved(ctx, req, u, tier, at, status, wire, 0, dur, err)
}

// logRowSaved is logRow for a conditional answer: saved is the body size a
// 304 spared. A row with an answer or a time on the wire stands for a
// request that went out; one with neither was refused before it left.
func (c *Client) logRowSaved(ctx context.Context, req Request, u *url.URL, tier string, at time.Time, status int, wire, saved int64, dur time.Duration, err error) {
	reach := rowUnsent
	if status != 0 || dur > 0 {
		reach = rowSent
	}
	c.writeRow(ctx, req, u, tier, at, status, wire, saved, dur, err, reach)
}

// rowReach says what a crawl_log row stands for, for the observer, where
// the row's status and duration cannot tell.
type rowReach int

const (
	rowSent   rowReach = iota // a request that left zhizhi
	rowUnsent                 // a request stopped before it left
	rowNote                   // no request of its own: a verdict on one already logged
)

// writeRow writes the row and tells the observer of the request it stands
// for, if any.
func (c *Client) writeRow(ctx context.Context, req Request, u *url.URL, tier string, at time.Time, status int, wire, saved int64, dur time.Duration, err error, reach rowReach) {
	row := &model.CrawlLog{
		BytesSaved: saved,
		SiteID:     req.SiteID,
		TargetID:   req.TargetID,
		Purpose:    req.Purpose,
		Method:     req.Method,
		Strategy:   tier,
		Bytes:      wire,
		Success:    err == nil && status >= 200 && status < 400,
		ErrorClass: ErrorClass(status, err),
		OccurredAt: at.UTC(),
	}
	if row.SiteID == nil {
		if u != nil {
			if pol := c.policy(hostOf(u)); pol.SiteID != 0 {
				id := pol.SiteID
				row.SiteID = &id
			}
		}
	}
	if u != nil {
		row.Host = hostOf(u)
		row.ArticleURL = u.String()
	} else {
		row.ArticleURL = req.URL
	}
	if status != 0 {
		s := status
		row.HTTPStatus = &s
	}
	// A duration marks a row that stands for a request that went out (see
	// rowReach): counting the rows with one counts the requests the sites
	// received, the ledger the sites' own access logs are checked against.
	// The guard refuses some requests only when it dials (a name that
	// resolves to a private address): those never left either.
	sent := reach == rowSent && ErrorClass(status, err) != ClassSSRF
	if sent && (status != 0 || dur > 0) {
		ms := int(dur / time.Millisecond)
		row.DurationMS = &ms
	}
	if err != nil {
		row.ErrorMsg = err.Error()
	}
	// The row must land even when the request's context was cancelled.
	if lerr := c.store.InsertCrawlLog(context.WithoutCancel(ctx), row); lerr != nil {
		c.log.Error("crawl log", "url", row.ArticleURL, "error", lerr)
	}
	if c.observe != nil && reach != rowNote {
		c.observe(RequestEvent{
			Host: row.Host, Purpose: row.Purpose, Tier: tier, Sent: sent,
			Status: status, ErrorClass: row.ErrorClass,
			WireBytes: wire, SavedBytes: saved, Duration: dur,
		})
	}
}

// RequestEvent is one request as an observer (metrics) hears of it, when
// its crawl_log row is written: every request the client made or refused,
// once. (The extra row that carries a browser page's verdict, when the
// page's own row is there, is not a request and is not heard of.)
type RequestEvent struct {
	Host    string // lower-case host name; "" when the URL could not be parsed
	Purpose string // model.Purpose* or PurposeAsset
	Tier    string // TierDirect or TierBrowser; "" when refused before a tier was chosen
	// Sent: the request left zhizhi (whether or not an answer came back).
	// False for one refused by zhizhi's own rules (robots.txt, the SSRF
	// guard, breaker, backoff, a remembered CAPTCHA, the browser's gate)
	// and for one the browser answered from its cache.
	Sent       bool
	Status     int    // HTTP status; 0 when no answer came
	ErrorClass string // Class*; "" for a success
	WireBytes  int64  // bytes on the wire
	SavedBytes int64  // body bytes a 304 spared
	Duration   time.Duration
}
