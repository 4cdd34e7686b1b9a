package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/robotstxt"
	"zhizhi/internal/store"
)

// A robots.txt that cannot be fetched (network error, 5xx, 429) closes its
// origin (fail-closed) but is asked for again soon, on a backoff of its own:
// RobotsRetryFirst after the first failure, doubling with each consecutive
// failure up to RobotsRetryMax. The count lives in robots_state, so a
// restart forgives nothing. Each failed fetch is also an error of the host,
// so its backoff and breaker apply to the retries too.
const (
	RobotsRetryFirst = time.Minute
	RobotsRetryMax   = time.Hour
)

// RobotsRetryDelay is how long after its n-th consecutive failed fetch a
// robots.txt is asked for again: 1, 2, 4, 8, 16 and 32 minutes, then every
// hour.
func RobotsRetryDelay(n int) time.Duration {
	if n <= 1 {
		return RobotsRetryFirst
	}
	d := RobotsRetryFirst
	for i := 1; i < n && d < RobotsRetryMax; i++ {
		d *= 2
	}
	return min(d, RobotsRetryMax)
}

// robotsOrigin is the cache key of u's robots.txt: scheme, host and port,
// the port always written ("https://www.gd.gov.cn:443"), since RFC 9309
// scopes a robots.txt to exactly that.
func robotsOrigin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(hostOf(u), port)
}

// robotsEntry is an origin's robots.txt as the client knows it.
type robotsEntry struct {
	origin    string // robotsOrigin
	host      string
	rules     *robotstxt.Robots
	status    int // 0: the fetch failed on the network
	fetchedAt time.Time
	checkedAt time.Time // last fetch or revalidation
	// Validators for the next revalidation, kept in robots_state too: a
	// new process revalidates the stored copy with a conditional GET.
	etag, lastModified string
	raw                []byte // the file as served (capped), for robots_state
	cause              string // how the fetch failed, when failed(): "connection refused", "HTTP 500"
	// The run of failed fetches this one belongs to, when failed().
	failures     int
	failingSince time.Time
}

// expired reports whether the entry may no longer be used at all: 24 h
// after a file was read (or found absent); for a failure, once its retry
// is due.
func (e *robotsEntry) expired(now time.Time) bool {
	if e.failed() {
		return !now.Before(e.retryAt())
	}
	return RobotsExpired(e.fetchedAt, now)
}

// retryAt is when a failed robots.txt is asked for again.
func (e *robotsEntry) retryAt() time.Time {
	return e.fetchedAt.Add(RobotsRetryDelay(e.failures))
}

func (e *robotsEntry) readable() bool {
	return e.status >= 200 && e.status < 300
}

// failed reports a robots.txt that could not be read (network error, 5xx,
// 429): the origin is closed (RobotsForStatus).
func (e *robotsEntry) failed() bool {
	return e.status == 0 || e.status >= 500 || e.status == http.StatusTooManyRequests
}

// usable reports whether e may answer at now without asking the site or
// the store: a file checked less than the recheck interval ago, or a
// failure whose retry is not due.
func (c *Client) usable(e *robotsEntry, now time.Time) bool {
	if e.failed() {
		return !e.expired(now)
	}
	return now.Sub(e.checkedAt) < c.recheck && !e.expired(now)
}

// ForgetRobots makes the next request to host revalidate its robots.txt
// first, on every origin (the crawl layer calls it at the start of a run
// on a host). A client that has not used host's robots.txt yet revalidates
// it anyway. A failed robots.txt keeps its retry time: starting a run is
// no reason to ask a failing host sooner.
func (c *Client) ForgetRobots(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	host = normalizeHostName(host)
	for origin, e := range c.robots {
		if e.host != host || e.failed() {
			continue
		}
		// Entries are never changed in place: readers hold them unlocked.
		cp := *e
		cp.checkedAt = time.Time{}
		c.robots[origin] = &cp
	}
}

// checkRobots refuses u when its origin's robots.txt disallows it, fetching
// or revalidating the file as needed. With cachedOnly, any copy already
// known is used as it is (the browser gate, called while the page's host
// is held, must not wait for that host's slot).
func (c *Client) checkRobots(ctx context.Context, u *url.URL, pol SitePolicy, cachedOnly bool) error {
	e, err := c.robotsFor(ctx, u, pol, cachedOnly)
	if err != nil {
		return err
	}
	if e.failed() {
		// Not a rule of the site's: there is no file to cite.
		return &RobotsError{URL: u.String(), Unreachable: true, RetryAt: e.retryAt(),
			Why: fmt.Sprintf("%s; failing since %s, next try at %s", robotsUnreachable(e.cause),
				e.failingSince.UTC().Format(time.RFC3339), e.retryAt().UTC().Format(time.RFC3339))}
	}
	d := e.rules.DecideURL(u)
	if d.Allowed {
		return nil
	}
	re := &RobotsError{URL: u.String(), Rule: d.Rule, Line: d.Line}
	if d.Line == 0 {
		re.Why = d.Reason
	}
	return re
}

// robotsFor returns the rules of u's origin, from memory, robots_state, a
// revalidation or a fresh fetch.
func (c *Client) robotsFor(ctx context.Context, u *url.URL, pol SitePolicy, cachedOnly bool) (*robotsEntry, error) {
	origin := robotsOrigin(u)
	c.mu.Lock()
	e := c.robots[origin]
	c.mu.Unlock()
	now := c.clock.Now()
	// A failure is looked up in the store each time (below): another
	// process may have read the file since, or a person cleared the host.
	if e != nil && (cachedOnly || !e.failed() && c.usable(e, now)) {
		return e, nil
	}
	rl := lockOf(&c.mu, c.robotLock, origin)
	rl.Lock()
	defer rl.Unlock()
	c.mu.Lock()
	e = c.robots[origin]
	c.mu.Unlock()
	now = c.clock.Now()
	if e != nil && !e.failed() && c.usable(e, now) {
		return e, nil // someone refreshed it while we waited
	}
	if e == nil || e.failed() {
		// The first use in this process, or a failure: the stored copy is
		// what every process shares. A file that was read is revalidated
		// (a 304 when unchanged) however recently, since the site may have
		// tightened it since. A failure is used as it is until its retry
		// is due: it disallows everything, the strictest answer there is.
		stored, err := c.loadRobots(ctx, origin)
		if err != nil {
			return nil, err
		}
		e = stored
		if e != nil && e.failed() && c.usable(e, now) {
			c.setRobots(origin, e, pol)
			return e, nil
		}
	}
	var prev *robotsEntry
	if e != nil && !e.expired(now) && e.readable() {
		prev = e
	}
	fresh, err := c.fetchRobots(ctx, u, prev)
	if err != nil {
		return nil, err
	}
	if fresh.failed() {
		fresh.failures, fresh.failingSince = 1, fresh.fetchedAt
		if e != nil && e.failed() {
			fresh.failures, fresh.failingSince = e.failures+1, e.failingSince
		}
		c.log.Warn("robots.txt unreachable: not crawling this host (fail-closed)", "origin", origin,
			"error", fresh.cause, "failures", fresh.failures, "retry_at", fresh.retryAt())
	}
	c.setRobots(origin, fresh, pol)
	if err := c.saveRobots(ctx, fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}

func (c *Client) setRobots(origin string, e *robotsEntry, pol SitePolicy) {
	c.mu.Lock()
	c.robots[origin] = e
	delay := c.crawlDelayLocked(e.host)
	c.mu.Unlock()
	c.limiter.SetPolicy(e.host, pol.hostPolicy(delay))
}

// crawlDelayLocked is the strictest Crawl-delay among host's origins: the
// limiter paces the host, whichever scheme or port a request uses.
func (c *Client) crawlDelayLocked(host string) time.Duration {
	var delay time.Duration
	for _, e := range c.robots {
		if e.host == host {
			d, _ := e.rules.CrawlDelay()
			delay = max(delay, d)
		}
	}
	return delay
}

// loadRobots reads the copy in robots_state, if any.
func (c *Client) loadRobots(ctx context.Context, origin string) (*robotsEntry, error) {
	st, err := c.store.GetRobotsState(ctx, origin)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	e := &robotsEntry{origin: origin, host: st.Host, status: st.Status, fetchedAt: st.FetchedAt, checkedAt: st.FetchedAt,
		raw: st.Body, etag: st.ETag, lastModified: st.LastModified}
	if e.failed() {
		e.cause = st.LastError
		if e.cause == "" {
			e.cause = failureCause(st.Status, nil)
		}
		e.failures = max(st.Failures, 1)
		e.failingSince = st.FetchedAt
		if st.FailingSince != nil {
			e.failingSince = *st.FailingSince
		}
		e.rules = robotstxt.DisallowAll(robotsUnreachable(e.cause))
	} else {
		e.rules = RobotsForStatus(st.Status, st.Body, nil, ProductToken)
	}
	return e, nil
}

// saveRobots stores e in robots_state.
func (c *Client) saveRobots(ctx context.Context, e *robotsEntry) error {
	st := model.RobotsState{Origin: e.origin, Host: e.host, Status: e.status, FetchedAt: e.fetchedAt,
		ETag: e.etag, LastModified: e.lastModified}
	if e.failed() {
		since := e.failingSince
		st.Failures, st.FailingSince, st.LastError = e.failures, &since, e.cause
	} else {
		st.Body = e.raw
		if len(st.Body) > robotstxt.ParseLimit {
			st.Body = st.Body[:robotstxt.ParseLimit]
		}
	}
	if err := c.store.PutRobotsState(ctx, &st); err != nil {
		return fmt.Errorf("save robots.txt of %s: %w", e.origin, err)
	}
	return nil
}

// fetchRobots asks the host for /robots.txt, following up to
// RobotsMaxRedirects redirects itself; every hop is a logged request
// through the guard, breaker and limiter. With prev, the request is
// conditional and a 304 returns prev, revalidated.
func (c *Client) fetchRobots(ctx context.Context, u *url.URL, prev *robotsEntry) (*robotsEntry, error) {
	target := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	req := Request{Purpose: model.PurposeRobots, Method: http.MethodGet, Accept: "text/plain,*/*;q=0.5"}
	if pol := c.policy(hostOf(u)); pol.SiteID != 0 {
		id := pol.SiteID
		req.SiteID = &id
	}
	var (
		resp *Response
		err  error
	)
	for hop := 0; ; hop++ {
		req.URL = target.String()
		if err = c.guard.CheckURL(target); err != nil {
			c.logRow(ctx, req, target, "", c.clock.Now(), 0, 0, 0, err)
			break
		}
		resp, err = c.wireRobots(ctx, req, target, prev)
		if err != nil || !isRedirect(resp.Status) || hop >= RobotsMaxRedirects {
			break
		}
		loc, perr := target.Parse(resp.Header.Get("Location"))
		if perr != nil || resp.Header.Get("Location") == "" {
			break
		}
		if err = c.guard.CheckRedirect(target, loc); err != nil {
			req.URL = loc.String()
			c.logRow(ctx, req, loc, "", c.clock.Now(), 0, 0, 0, err)
			break
		}
		target, prev = loc, nil
	}
	now := c.clock.Now()
	var be *BlockedError
	switch {
	case errors.As(err, &be), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil,
		store.IsUnavailable(err):
		// Not an answer about robots.txt: the host is closed to us, the
		// caller gave up or our own database did not answer (the shared
		// limiter, the host's state). Nothing is cached.
		return nil, err
	case err == nil && resp.NotModified && prev != nil:
		// Still the same file: a fresh copy, valid for another RobotsTTL.
		cp := *prev
		cp.checkedAt, cp.fetchedAt = now, now
		return &cp, nil
	}
	e := &robotsEntry{origin: robotsOrigin(u), host: hostOf(u), fetchedAt: now, checkedAt: now}
	if err != nil {
		e.rules = RobotsForStatus(0, nil, err, ProductToken)
	} else {
		e.status = resp.Status
		e.raw = resp.Body
		e.etag = resp.Header.Get("ETag")
		e.lastModified = resp.Header.Get("Last-Modified")
		e.rules = RobotsForStatus(resp.Status, resp.Body, nil, ProductToken)
	}
	if e.failed() {
		e.cause = failureCause(e.status, err)
	}
	return e, nil
}

// wireRobots makes one robots.txt request on the direct tier, conditional
// on prev's validators, and logs it.
func (c *Client) wireRobots(ctx context.Context, req Request, u *url.URL, prev *robotsEntry) (*Response, error) {
	hdr := http.Header{}
	if prev != nil {
		if prev.etag != "" {
			hdr.Set("If-None-Match", prev.etag)
		}
		if prev.lastModified != "" {
			hdr.Set("If-Modified-Since", prev.lastModified)
		}
	}
	l := c.limits
	l.TruncateAt = robotstxt.ParseLimit
	resp, a, err := c.wire(ctx, req, u, hdr, l)
	var saved int64
	if err == nil && resp.NotModified && prev != nil {
		saved = int64(len(prev.raw))
	}
	c.logRowSaved(ctx, req, u, TierDirect, a.at, a.status, a.wire, saved, a.dur, err)
	return resp, err
}
