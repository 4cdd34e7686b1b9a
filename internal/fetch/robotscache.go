package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// robotsEntry is a host's robots.txt as the client knows it.
type robotsEntry struct {
	rules     *Robots
	status    int // 0: the fetch failed on the network
	fetchedAt time.Time
	checkedAt time.Time // last fetch or revalidation
	// Validators for the next revalidation, kept in host_state too: a new
	// process revalidates the stored copy with a conditional GET.
	etag, lastModified string
	raw                []byte // the file as served (capped), for host_state
	reason             string // why the fetch failed, when status is 0
}

// body is what host_state keeps: the file, or the reason it failed.
func (e *robotsEntry) body() []byte {
	if e.status == 0 {
		return []byte(e.reason)
	}
	if len(e.raw) > RobotsParseLimit {
		return e.raw[:RobotsParseLimit]
	}
	return e.raw
}

// expired reports whether the entry may no longer be used at all: 24 h for
// a file that was read (or absent), RobotsFailureTTL for a failure.
func (e *robotsEntry) expired(now time.Time) bool {
	ttl := RobotsTTL
	if e.status == 0 || e.status >= 500 || e.status == http.StatusTooManyRequests {
		ttl = RobotsFailureTTL
	}
	return !now.Before(e.fetchedAt.Add(ttl))
}

func (e *robotsEntry) readable() bool {
	return e.status >= 200 && e.status < 300
}

// failed reports a robots.txt that could not be read (network error, 5xx,
// 429): the host is closed (RobotsForStatus).
func (e *robotsEntry) failed() bool {
	return e.status == 0 || e.status >= 500 || e.status == http.StatusTooManyRequests
}

// ForgetRobots makes the next request to host revalidate its robots.txt
// first (the crawl layer calls it at the start of a run on a host). A
// client that has not used host's robots.txt yet revalidates it anyway.
func (c *Client) ForgetRobots(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	host = normalizeHostName(host)
	if e := c.robots[host]; e != nil {
		// Entries are never changed in place: readers hold them unlocked.
		cp := *e
		cp.checkedAt = time.Time{}
		c.robots[host] = &cp
	}
}

// checkRobots refuses u when its host's robots.txt disallows it, fetching
// or revalidating the file as needed. With cachedOnly, any copy already
// known is used as it is (the browser gate, called while the page's host
// is held, must not wait for that host's slot).
func (c *Client) checkRobots(ctx context.Context, u *url.URL, pol SitePolicy, cachedOnly bool) error {
	e, err := c.robotsFor(ctx, u, pol, cachedOnly)
	if err != nil {
		return err
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

// robotsFor returns the host's robots.txt rules, from memory, host_state,
// a revalidation or a fresh fetch.
func (c *Client) robotsFor(ctx context.Context, u *url.URL, pol SitePolicy, cachedOnly bool) (*robotsEntry, error) {
	host := hostOf(u)
	c.mu.Lock()
	e := c.robots[host]
	c.mu.Unlock()
	now := c.clock.Now()
	if e != nil && (cachedOnly || now.Sub(e.checkedAt) < c.recheck && !e.expired(now)) {
		return e, nil
	}
	rl := lockOf(&c.mu, c.robotLock, host)
	rl.Lock()
	defer rl.Unlock()
	c.mu.Lock()
	e = c.robots[host]
	c.mu.Unlock()
	now = c.clock.Now()
	if e != nil && now.Sub(e.checkedAt) < c.recheck && !e.expired(now) {
		return e, nil // someone refreshed it while we waited
	}
	if e == nil {
		// The first use in this process: the stored copy may be older
		// than a tightening the site made since, so it is revalidated (a
		// 304 when unchanged) however recently it was read. Only a stored
		// failure is used as it is: it disallows everything, the
		// strictest answer there is, until RobotsFailureTTL.
		stored, err := c.loadRobots(ctx, host)
		if err != nil {
			return nil, err
		}
		if stored != nil && !stored.expired(now) {
			e = stored
			if e.failed() {
				c.setRobots(host, e, pol)
				return e, nil
			}
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
	c.setRobots(host, fresh, pol)
	if err := c.saveRobots(ctx, host, fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}

func (c *Client) setRobots(host string, e *robotsEntry, pol SitePolicy) {
	c.mu.Lock()
	c.robots[host] = e
	c.mu.Unlock()
	delay, _ := e.rules.CrawlDelay()
	c.limiter.SetPolicy(host, pol.hostPolicy(delay))
}

// loadRobots reads the copy in host_state, if any.
func (c *Client) loadRobots(ctx context.Context, host string) (*robotsEntry, error) {
	st, err := c.store.GetHostState(ctx, host)
	if errors.Is(err, store.ErrNotFound) || err == nil && st.RobotsFetchedAt == nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("robots for %s: %w", host, err)
	}
	e := &robotsEntry{status: st.RobotsStatus, fetchedAt: *st.RobotsFetchedAt, checkedAt: *st.RobotsFetchedAt,
		raw: st.RobotsBody, etag: st.RobotsETag, lastModified: st.RobotsLastModified}
	if st.RobotsStatus == 0 {
		e.reason = string(st.RobotsBody)
		e.rules = DisallowAll(e.reason)
	} else {
		e.rules = RobotsForStatus(st.RobotsStatus, st.RobotsBody, nil, ProductToken)
	}
	return e, nil
}

// saveRobots stores e in host_state, leaving the other fields alone.
func (c *Client) saveRobots(ctx context.Context, host string, e *robotsEntry) error {
	at := e.fetchedAt
	st := model.HostState{Host: host, RobotsStatus: e.status, RobotsBody: e.body(), RobotsFetchedAt: &at,
		RobotsETag: e.etag, RobotsLastModified: e.lastModified}
	if err := c.store.PutHostRobots(ctx, &st); err != nil {
		return fmt.Errorf("save robots of %s: %w", host, err)
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
	case errors.As(err, &be), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		// Not an answer about robots.txt: the host is closed to us or the
		// caller gave up. Nothing is cached.
		return nil, err
	case err == nil && resp.NotModified && prev != nil:
		// Still the same file: a fresh copy, valid for another RobotsTTL.
		cp := *prev
		cp.checkedAt, cp.fetchedAt = now, now
		return &cp, nil
	}
	e := &robotsEntry{fetchedAt: now, checkedAt: now}
	if err != nil {
		e.rules = RobotsForStatus(0, nil, err, ProductToken)
		e.status = 0
		d := e.rules.Decide("/")
		e.reason = d.Reason
		return e, nil
	}
	e.status = resp.Status
	e.raw = resp.Body
	e.etag = resp.Header.Get("ETag")
	e.lastModified = resp.Header.Get("Last-Modified")
	e.rules = RobotsForStatus(resp.Status, resp.Body, nil, ProductToken)
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
	l.TruncateAt = RobotsParseLimit
	resp, a, err := c.wire(ctx, req, u, hdr, l)
	c.logRow(ctx, req, u, TierDirect, a.at, a.status, a.wire, a.dur, err)
	return resp, err
}
