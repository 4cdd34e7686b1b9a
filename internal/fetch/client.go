package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// PurposeAsset is the crawl_log purpose of a request a rendered page made
// for itself (scripts, XHR): not asked for by the crawl, but made on its
// behalf, so it is logged like any other.
const PurposeAsset = "asset"

// DefaultRobotsRecheck is how old a cached robots.txt may get before the
// next request revalidates it with a conditional GET (see ClientOptions).
const DefaultRobotsRecheck = 5 * time.Minute

// defaultAccept is sent when a Request names none.
const defaultAccept = "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8"

// ClientOptions configure a Client.
type ClientOptions struct {
	// Store persists host_state, url_state, cookies and crawl_log. Required.
	Store *store.Store
	// Clock is the time of every politeness rule; nil means RealClock.
	Clock Clock
	// Resolve pins hosts to addresses (ZHIZHI_RESOLVE); only these may be
	// loopback.
	Resolve ResolveMap
	// Version and ContactURL make the User-Agent.
	Version    string
	ContactURL string
	// Limits bound each request; zero fields take DefaultLimits.
	Limits Limits
	// Browser starts the browser tier on first need; nil means no browser
	// tier, and a host that needs one fails with ErrNoBrowser.
	Browser BrowserStarter
	// Logger; nil means slog.Default().
	Logger *slog.Logger

	// RobotsRecheck is how old a cached robots.txt may get before it is
	// revalidated (a conditional GET: a 304 costs no body). This is how a
	// tightened robots.txt applies within minutes rather than within the
	// 24 h cache; ForgetRobots makes it apply at the next request, and a
	// new client revalidates the copy in host_state at its first use of
	// a host. Zero means DefaultRobotsRecheck.
	RobotsRecheck time.Duration

	// ObserveRequest, when set, hears of every request once, as its
	// crawl_log row is written (metrics). It must be quick and safe for
	// concurrent use: it runs on the request's goroutine.
	ObserveRequest func(RequestEvent)

	// LookupIP and Dial replace the guard's resolver and dialer (tests:
	// nothing may leave loopback).
	LookupIP func(ctx context.Context, host string) ([]net.IP, error)
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client is zhizhi's polite fetcher: every request passes the SSRF guard,
// robots.txt, the host's breaker and backoff, the host limiter and the size
// and time limits, and lands in crawl_log, whichever tier serves it. It is
// safe for concurrent use.
type Client struct {
	store   *store.Store
	clock   Clock
	guard   *Guard
	http    *http.Client
	limits  Limits
	limiter *Limiter
	health  *HealthTracker
	ua      string
	log     *slog.Logger
	recheck time.Duration
	observe func(RequestEvent)

	mu        sync.Mutex
	policies  map[string]SitePolicy
	robots    map[string]*robotsEntry
	hostLocks map[string]*sync.Mutex // host_state read-modify-write
	robotLock map[string]*sync.Mutex // one robots.txt fetch per host at a time
	tierLock  map[string]*sync.Mutex // one browser visit per host at a time
	harvests  map[string]int         // cookie harvests per host, to spot a fresh one

	browser *browserTier
	// stallBrowser, set by tests before the browser starts, is called for
	// every plain-HTTP request the browser proxy relays before anything
	// else: a browser starved of CPU holding a request it was allowed to
	// send.
	stallBrowser func(*http.Request)
}

// NewClient returns a Client; Close releases it (and the browser).
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Store == nil {
		return nil, errors.New("new fetch client: a store is required")
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RobotsRecheck <= 0 {
		opts.RobotsRecheck = DefaultRobotsRecheck
	}
	l := opts.Limits
	d := DefaultLimits
	if l.MaxRawBytes <= 0 {
		l.MaxRawBytes = d.MaxRawBytes
	}
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = d.MaxDecompressedBytes
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = d.MaxRedirects
	}
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = d.RequestTimeout
	}
	g := &Guard{Resolve: opts.Resolve, LookupIP: opts.LookupIP, Dial: opts.Dial}
	hc := g.NewClient(l)
	// The client follows redirects itself, so that every hop is checked
	// against robots.txt, paced by the limiter and logged.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{
		store:     opts.Store,
		clock:     opts.Clock,
		guard:     g,
		http:      hc,
		limits:    l,
		limiter:   NewSharedLimiter(opts.Clock, opts.Store),
		health:    &HealthTracker{Clock: opts.Clock, Store: hostStates{opts.Store}},
		ua:        UserAgent(opts.Version, opts.ContactURL),
		log:       opts.Logger,
		recheck:   opts.RobotsRecheck,
		observe:   opts.ObserveRequest,
		policies:  map[string]SitePolicy{},
		robots:    map[string]*robotsEntry{},
		hostLocks: map[string]*sync.Mutex{},
		robotLock: map[string]*sync.Mutex{},
		tierLock:  map[string]*sync.Mutex{},
		harvests:  map[string]int{},
	}
	c.browser = &browserTier{start: opts.Browser}
	return c, nil
}

// UserAgent returns the identity the client sends.
func (c *Client) UserAgent() string { return c.ua }

// Limiter exposes the host limiter (for display and tests).
func (c *Client) Limiter() *Limiter { return c.limiter }

// Guard returns the client's SSRF guard, for a request that is not a
// fetch but must reach only where a fetch may (a crawl job's webhook).
func (c *Client) Guard() *Guard { return c.guard }

// Close stops the browser tier, if it was started, and idle connections.
func (c *Client) Close() error {
	c.browser.close()
	c.http.CloseIdleConnections()
	return nil
}

// SetSitePolicy sets the policy of host (lower-case host name, as
// SiteHost gives). A tightened policy applies to the next request. Owned
// is honoured only for a host the resolve map pins to loopback.
func (c *Client) SetSitePolicy(host string, p SitePolicy) {
	host = normalizeHostName(host)
	p.Strategy = normalizeTier(p.Strategy)
	if p.Owned && !c.guard.Resolve.Loopback(host) {
		// Owned loosens the limiter and may turn robots.txt off: only for
		// a host we run here, which the resolve map pins to loopback. A
		// database or site file that says otherwise is not believed.
		c.log.Warn("owned ignored: the host is not mapped to loopback by ZHIZHI_RESOLVE; default limits and robots.txt apply", "host", host)
		p.Owned, p.Burst = false, 0
	}
	c.mu.Lock()
	c.policies[host] = p
	delay := c.crawlDelayLocked(host)
	c.mu.Unlock()
	c.limiter.SetPolicy(host, p.hostPolicy(delay))
}

// LoadSitePolicies sets the policy of every site in the store, keyed by
// the host of its base_url. res gives a site's adapter resilience rules
// (nil: none).
func (c *Client) LoadSitePolicies(ctx context.Context, res func(model.Site) Resilience) error {
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		return fmt.Errorf("load site policies: %w", err)
	}
	// A site's own spacing (rate.interval_sec, stored on each of its
	// targets as interval_sec): the strictest one counts.
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		return fmt.Errorf("load site policies: %w", err)
	}
	interval := map[int64]time.Duration{}
	for _, t := range targets {
		if d := time.Duration(t.IntervalSec) * time.Second; d > interval[t.SiteID] {
			interval[t.SiteID] = d
		}
	}
	for _, s := range sites {
		host := SiteHost(s)
		if host == "" {
			continue
		}
		var r Resilience
		if res != nil {
			r = res(s)
		}
		p := PolicyFor(s, r)
		p.Interval = max(p.Interval, interval[s.ID])
		c.SetSitePolicy(host, p)
	}
	return nil
}

// SitePolicy is the policy the client applies to host (lower-case host
// name): the one SetSitePolicy set, or DefaultSitePolicy.
func (c *Client) SitePolicy(host string) SitePolicy { return c.policy(normalizeHostName(host)) }

// HasBrowser reports whether the client has a browser tier to start (it
// may still fail to start: ErrNoBrowser).
func (c *Client) HasBrowser() bool { return c.browser.start != nil }

func (c *Client) policy(host string) SitePolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.policies[host]; ok {
		return p
	}
	return DefaultSitePolicy()
}

func lockOf(mu *sync.Mutex, m map[string]*sync.Mutex, key string) *sync.Mutex {
	mu.Lock()
	defer mu.Unlock()
	l := m[key]
	if l == nil {
		l = &sync.Mutex{}
		m[key] = l
	}
	return l
}

// hostOf is the limiter and policy key of u.
func hostOf(u *url.URL) string { return normalizeHostName(u.Hostname()) }

// Do makes one polite request, following redirects itself (each hop a
// request of its own: checked, paced and logged). Refusals come back as
// *RefusedError (SSRF guard), *RobotsError, *BlockedError (breaker open),
// ErrCaptcha, ErrNoBrowser; limits as *ErrTooLarge, ErrTooManyRedirects,
// ErrTimeout. A non-2xx answer is not an error: check Response.Status.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	req.Method = strings.ToUpper(req.Method)
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("fetch %s: method %s: only GET and HEAD are made", req.URL, req.Method)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		err = &RefusedError{Host: req.URL, Reason: "unparsable URL: " + err.Error()}
		c.logRow(ctx, req, nil, "", c.clock.Now(), 0, 0, 0, err)
		return nil, err
	}
	for hop := 0; ; hop++ {
		resp, err := c.one(ctx, req, u)
		if err != nil || !isRedirect(resp.Status) || req.NoRedirects {
			return resp, err
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return resp, nil
		}
		next, perr := u.Parse(loc)
		if perr != nil {
			return resp, fmt.Errorf("fetch %s: bad redirect location %q: %w", u.Redacted(), loc, perr)
		}
		if hop >= c.limits.redirects() {
			return resp, fmt.Errorf("fetch %s: follow redirect to %s: %w (limit %d)", req.URL, next.Redacted(), ErrTooManyRedirects, c.limits.redirects())
		}
		if err := c.guard.CheckRedirect(u, next); err != nil {
			req.URL = next.String()
			c.logRow(ctx, req, next, "", c.clock.Now(), 0, 0, 0, err)
			return nil, err
		}
		// A hop to a name that resolves to a refused address is refused
		// as such, before its robots.txt is asked for: met there, it
		// would read as a robots.txt that cannot be read and close the
		// name. (The dialer judges every connection again.)
		if c.guard.CheckURL(next) == nil { // else the hop's own request says why
			var refused *RefusedError
			if err := c.guard.CheckName(ctx, next.Hostname()); errors.As(err, &refused) {
				req.URL = next.String()
				c.logRow(ctx, req, next, "", c.clock.Now(), 0, 0, 0, err)
				return nil, err
			}
		}
		// The next hop is a fresh request to whatever host it names; a
		// conditional request's validators belong to the first URL only.
		req.Conditional = false
		u = next
	}
}

// CheckTarget refuses, before anything is sent, a URL the SSRF guard
// would refuse: its scheme, user information, port and host literal, and
// the addresses its name resolves to now (the dialer judges every
// connection again, so a name whose answer changes later is still
// refused). A refusal is a *RefusedError and gets its crawl_log row, as
// Do's refusals do. A caller fetching on someone else's behalf (the
// acquisition API) checks first, so that a name resolving to a private
// address is refused as such, not met as a robots.txt that could not be
// read, which would close the name for a while.
func (c *Client) CheckTarget(ctx context.Context, req Request) error {
	u, err := url.Parse(req.URL)
	if err != nil {
		err = &RefusedError{Host: req.URL, Reason: "unparsable URL: " + err.Error()}
		c.logRow(ctx, req, nil, "", c.clock.Now(), 0, 0, 0, err)
		return err
	}
	err = c.guard.CheckURL(u)
	if err == nil {
		err = c.guard.CheckName(ctx, u.Hostname())
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		c.logRow(ctx, req, u, "", c.clock.Now(), 0, 0, 0, err)
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	return nil
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// one makes a single request (no redirects) through every gate, choosing
// the tier. A CAPTCHA met on either tier is remembered in host_state, so
// no later request (in any process) asks the host again until a person
// has cleared it.
func (c *Client) one(ctx context.Context, req Request, u *url.URL) (*Response, error) {
	resp, err := c.oneTier(ctx, req, u)
	var be *BlockedError
	if errors.Is(err, ErrCaptcha) && !errors.As(err, &be) {
		if rerr := c.recordCaptcha(ctx, hostOf(u)); rerr != nil {
			c.log.Error("record captcha", "host", hostOf(u), "error", rerr)
		}
	}
	return resp, err
}

func (c *Client) recordCaptcha(ctx context.Context, host string) error {
	hl := lockOf(&c.mu, c.hostLocks, host)
	hl.Lock()
	defer hl.Unlock()
	h, err := c.health.RecordCaptcha(ctx, host)
	if err != nil {
		return err
	}
	c.log.Error("🔴 CAPTCHA: host stopped until a person clears it", "host", host, "needs_review", h.NeedsReview)
	return nil
}

func (c *Client) oneTier(ctx context.Context, req Request, u *url.URL) (*Response, error) {
	host := hostOf(u)
	pol := c.policy(host)
	if err := c.guard.CheckURL(u); err != nil {
		c.logRow(ctx, req, u, "", c.clock.Now(), 0, 0, 0, err)
		return nil, err
	}
	if pol.robotsApply() && !isRobotsFile(req, u) {
		if err := c.checkRobots(ctx, u, pol, false); err != nil {
			c.logRow(ctx, req, u, "", c.clock.Now(), 0, 0, 0, err)
			return nil, err
		}
	}
	tier := req.Tier
	if tier == "" && pol.Strategy == TierBrowser && req.Method == http.MethodGet {
		// A browser host goes through the browser until it has cookies
		// the direct tier can reuse.
		cookies, err := c.store.ValidCookies(ctx, host, c.clock.Now())
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
		}
		if len(cookies) == 0 {
			tier = TierBrowser
		}
	}
	if tier == TierBrowser {
		return c.viaBrowser(ctx, req, u, pol)
	}
	gen := c.harvestGen(host)
	resp, challenged, err := c.direct(ctx, req, u, pol)
	if err != nil || !challenged || req.Tier == TierDirect || req.Method != http.MethodGet {
		if resp != nil && challenged {
			resp.Challenged = true
		}
		return resp, err
	}
	// The answer is a cookie challenge: one browser visit per host at a
	// time; whoever waited for it reuses the cookies it harvested.
	tl := lockOf(&c.mu, c.tierLock, host)
	tl.Lock()
	defer tl.Unlock()
	if c.harvestGen(host) != gen {
		resp, challenged, err = c.direct(ctx, req, u, pol)
		if err != nil || !challenged {
			return resp, err
		}
	}
	if err := c.store.DeleteCookies(ctx, host); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	return c.viaBrowser(ctx, req, u, pol)
}

// isRobotsFile reports the one request robots.txt itself cannot govern: a
// fetch of /robots.txt for its rules (RFC 9309 §2.3.1). Purpose alone is
// not enough: it is the caller's word, and any other URL asked for with
// it goes through the rules like every request.
func isRobotsFile(req Request, u *url.URL) bool {
	return req.Purpose == model.PurposeRobots && u.Path == "/robots.txt" && u.RawQuery == ""
}

func (c *Client) harvestGen(host string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.harvests[host]
}

// waitHealthy waits out a host's backoff on the clock and refuses a host
// whose breaker is open.
func (c *Client) waitHealthy(ctx context.Context, host string) error {
	for {
		_, err := c.health.Check(ctx, host)
		var be *BlockedError
		if !errors.As(err, &be) {
			return err
		}
		if be.Reason == "breaker open" {
			return be
		}
		if err := c.clock.Sleep(ctx, be.Until.Sub(c.clock.Now())); err != nil {
			return err
		}
	}
}

// record folds an outcome into the host's health and holds the limiter
// for the backoff (or Retry-After) it implies.
func (c *Client) record(ctx context.Context, host string, status int, header http.Header, reqErr error) error {
	hl := lockOf(&c.mu, c.hostLocks, host)
	hl.Lock()
	defer hl.Unlock()
	h, f, err := c.health.Record(ctx, host, status, header, reqErr)
	if err != nil {
		return err
	}
	if f.K > 0 {
		c.limiter.NotBefore(host, c.clock.Now().Add(f.Delay))
		c.log.Warn("host error", "host", host, "consecutive_errors", f.K, "backoff", f.Delay.String())
	}
	if f.Tripped {
		c.log.Error("🔴 breaker open", "host", host, "until", h.BreakerUntil, "needs_review", h.NeedsReview)
	}
	return nil
}

// attempt is what crawl_log needs to know about one request.
type attempt struct {
	at     time.Time // on the client clock, when the request went out (or was refused)
	status int
	wire   int64
	dur    time.Duration // wall time on the wire
}

// wire makes one direct request: backoff and breaker, the limiter, the
// guard, then the host's health. It does not log; callers do, once they
// know how to classify the answer.
func (c *Client) wire(ctx context.Context, req Request, u *url.URL, hdr http.Header, l Limits) (*Response, attempt, error) {
	host := hostOf(u)
	a := attempt{at: c.clock.Now()}
	if err := c.waitHealthy(ctx, host); err != nil {
		return nil, a, err
	}
	release, err := c.limiter.Acquire(ctx, host)
	if err != nil {
		return nil, a, err
	}
	defer release()
	a.at = c.clock.Now()
	// The breaker may have opened while we waited for the slot.
	if _, err := c.health.Check(ctx, host); err != nil {
		var be *BlockedError
		if !errors.As(err, &be) || be.Reason == "breaker open" {
			return nil, a, err
		}
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, u.String(), nil)
	if err != nil {
		return nil, a, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	if req.BeforeSend != nil {
		if err := req.BeforeSend(ctx); err != nil {
			return nil, a, fmt.Errorf("fetch %s: not sent: %w", u.Redacted(), err)
		}
	}
	for k, v := range hdr {
		hr.Header[k] = v
	}
	hr.Header.Set("User-Agent", c.ua)
	accept := req.Accept
	if accept == "" {
		accept = defaultAccept
	}
	hr.Header.Set("Accept", accept)
	hr.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
	wall := time.Now()
	resp, err := c.guard.Do(ctx, c.http, hr, l)
	a.dur = time.Since(wall)
	var header http.Header
	if resp != nil {
		a.status, header, a.wire = resp.Status, resp.Header, resp.WireBytes
		resp.Duration = a.dur
	}
	if rerr := c.record(ctx, host, a.status, header, err); rerr != nil {
		c.log.Error("record host health", "host", host, "error", rerr)
	}
	return resp, a, err
}

// direct makes one request on the direct tier with the pool's cookies and,
// when asked, conditional headers from url_state; then url_state and
// crawl_log. challenged reports an answer the site's resilience rules send
// to the browser.
func (c *Client) direct(ctx context.Context, req Request, u *url.URL, pol SitePolicy) (resp *Response, challenged bool, err error) {
	hdr := http.Header{}
	fail := func(err error) (*Response, bool, error) {
		c.logRow(ctx, req, u, TierDirect, c.clock.Now(), 0, 0, 0, err)
		return nil, false, err
	}
	if err := c.addCookies(ctx, hdr, hostOf(u), u); err != nil {
		return fail(err)
	}
	var prev *model.URLState
	if req.Conditional {
		st, err := c.urlState(ctx, u.String())
		if err != nil {
			return fail(err)
		}
		prev = &st
		if st.ETag != "" {
			hdr.Set("If-None-Match", st.ETag)
		}
		if st.LastModified != "" {
			hdr.Set("If-Modified-Since", st.LastModified)
		}
	}
	l := c.limits
	if req.MaxBytes > 0 {
		if req.Head {
			l.TruncateAt = req.MaxBytes
			// Ask for the head only: a site that serves files (nginx)
			// then sends no more than the head, where one that ignores
			// Range has pushed the whole page into the connection before
			// zhizhi hangs up. nginx drops ranges when it compresses on
			// the fly, so the head is asked for uncompressed.
			hdr.Set("Range", fmt.Sprintf("bytes=0-%d", req.MaxBytes-1))
			hdr.Set("Accept-Encoding", "identity")
		} else if req.MaxBytes < l.MaxDecompressedBytes {
			l.MaxDecompressedBytes = req.MaxBytes
		}
	}
	resp, a, err := c.wire(ctx, req, u, hdr, l)
	if err == nil && req.Method == http.MethodGet && isHTMLish(resp) {
		switch {
		case pol.isCaptcha(resp.Body):
			err = fmt.Errorf("fetch %s: %w", u.Redacted(), ErrCaptcha)
		case pol.escalates(resp.Status, resp.Body):
			challenged = true
		}
	}
	// A probe (validate, fetch, extract --url) leaves url_state alone: its
	// validators would make the next crawl's conditional request answer
	// 304 for a page whose change was never stored.
	if err == nil && !challenged && req.Method == http.MethodGet && req.Purpose != model.PurposeProbe &&
		(resp.Status == http.StatusOK || resp.Status == http.StatusPartialContent && req.Head || resp.NotModified) {
		if serr := c.noteURLState(ctx, u.String(), resp, prev); serr != nil {
			c.log.Error("update url state", "url", u.Redacted(), "error", serr)
		}
	}
	rowErr := err
	if challenged {
		rowErr = errChallenge
	}
	var saved int64
	if err == nil && resp.NotModified && prev != nil {
		saved = prev.ContentLength
	}
	c.logRowSaved(ctx, req, u, TierDirect, a.at, a.status, a.wire, saved, a.dur, rowErr)
	if err != nil {
		return nil, false, err
	}
	return resp, challenged, nil
}

// errChallenge marks, in crawl_log, a direct answer that was a challenge.
var errChallenge = errors.New("cookie challenge: escalated to the browser tier")

func isHTMLish(r *Response) bool {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	return ct == "" || strings.Contains(ct, "html") || strings.HasPrefix(ct, "text/")
}

// addCookies adds the pool's valid cookies for host whose path matches.
func (c *Client) addCookies(ctx context.Context, hdr http.Header, host string, u *url.URL) error {
	cookies, err := c.store.ValidCookies(ctx, host, c.clock.Now())
	if err != nil {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	var pairs []string
	for _, ck := range cookies {
		p := ck.Path
		if p == "" {
			p = "/"
		}
		if !strings.HasPrefix(u.EscapedPath(), strings.TrimSuffix(p, "/")) {
			continue
		}
		pairs = append(pairs, (&http.Cookie{Name: ck.Name, Value: ck.Value}).String())
	}
	if len(pairs) > 0 {
		hdr.Set("Cookie", strings.Join(pairs, "; "))
	}
	return nil
}

// hostStates adapts the store to HostStateStore: a host never seen is a
// zero state, not an error.
type hostStates struct{ s *store.Store }

func (h hostStates) GetHostState(ctx context.Context, host string) (model.HostState, error) {
	st, err := h.s.GetHostState(ctx, host)
	if errors.Is(err, store.ErrNotFound) {
		return model.HostState{Host: host}, nil
	}
	return st, err
}

// PutHostState writes only the health fields: robots.txt and the bucket
// may have been changed meanwhile by another process.
func (h hostStates) PutHostState(ctx context.Context, st model.HostState) error {
	return h.s.PutHostHealth(ctx, &st)
}
