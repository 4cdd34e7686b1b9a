package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"zhizhi/internal/browser"
	"zhizhi/internal/model"
)

// ErrNoBrowser: the host needs the browser tier (fetch strategy
// playwright, or a cookie challenge) and this client has none.
var ErrNoBrowser = errors.New("this host needs the browser tier (fetch strategy playwright or a cookie challenge), but no browser is configured: install Debian's chromium package or set ZHIZHI_CHROMIUM")

// ErrChallengeNotCleared: the browser could not pass the site's cookie
// challenge either; the page is not fetched.
var ErrChallengeNotCleared = errors.New("the cookie challenge was not cleared by the browser tier")

// errBrowser marks other browser-tier failures for crawl_log.
var errBrowser = errors.New("browser tier")

// errGate marks a page's request refused by the browser gate.
var errGate = errors.New("refused by the browser gate")

// Renderer is the browser tier as the client uses it; *browser.Browser is
// one.
type Renderer interface {
	Render(ctx context.Context, rawURL string, opts browser.RenderOptions) (*browser.Page, error)
	Close()
}

// BrowserConfig is what the client gives the browser it starts.
type BrowserConfig struct {
	UAToken string
	Resolve map[string]string
	// Proxy is the client's local browser proxy, "http://127.0.0.1:port":
	// Chromium's only way out, dialling through the SSRF guard.
	Proxy string
	// Allow is the gate for every request a page makes: the page's own
	// site only, the SSRF guard, robots.txt, the breaker and a token of
	// the host's bucket.
	Allow func(ctx context.Context, u *url.URL) error
}

// BrowserStarter starts the browser tier. The client calls it once, on
// the first page that needs a browser, with a context that ends at Close.
type BrowserStarter func(ctx context.Context, cfg BrowserConfig) (Renderer, error)

// Chromium starts Debian's chromium (execPath, empty for the default)
// through internal/browser, every connection through cfg.Proxy. Images,
// fonts, media and style sheets are never fetched: the text is what zhizhi
// reads.
func Chromium(execPath string, logger *slog.Logger) BrowserStarter {
	return func(ctx context.Context, cfg BrowserConfig) (Renderer, error) {
		return browser.New(ctx, browser.Options{
			ExecPath:   execPath,
			UAToken:    cfg.UAToken,
			Resolve:    cfg.Resolve,
			Proxy:      cfg.Proxy,
			Allow:      cfg.Allow,
			BlockTypes: []string{"Image", "Font", "Media", "Stylesheet"},
			MaxTabs:    1,
			Logger:     logger,
		})
	}
}

// browserTier starts the renderer lazily and stops it at Close.
type browserTier struct {
	start BrowserStarter

	mu     sync.Mutex
	r      Renderer
	proxy  *BrowserProxy
	live   liveHosts // what the proxy lets through
	relays relayLog  // body bytes of what the proxy relayed
	err    error
	cancel context.CancelFunc
}

func (t *browserTier) get(c *Client) (Renderer, error) {
	if t.start == nil {
		return nil, ErrNoBrowser
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.r != nil || t.err != nil {
		return t.r, t.err
	}
	ctx, cancel := context.WithCancel(context.Background())
	resolve := make(map[string]string, len(c.guard.Resolve))
	for h, a := range c.guard.Resolve {
		resolve[h] = a
	}
	// Chromium resolves nothing itself: every connection it makes goes
	// through this proxy, which dials only through the guard.
	proxy, err := StartBrowserProxy(ctx, c.guard, BrowserProxyOptions{Logger: c.log, Admit: t.live.admit, Relay: t.relays.open,
		Pace: c.limiter.TakeSent, stall: c.stallBrowser})
	if err != nil {
		cancel()
		t.err = fmt.Errorf("%w: start browser: %w", ErrNoBrowser, err)
		return nil, t.err
	}
	r, err := t.start(ctx, BrowserConfig{UAToken: c.ua, Resolve: resolve, Proxy: proxy.URL(), Allow: c.allow})
	if err != nil {
		cancel()
		proxy.Close()
		t.err = fmt.Errorf("%w: start browser: %w", ErrNoBrowser, err)
		return nil, t.err
	}
	t.r, t.proxy, t.cancel = r, proxy, cancel
	return r, nil
}

func (t *browserTier) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.r != nil {
		t.r.Close()
		t.proxy.Close()
		t.cancel()
		t.r, t.proxy = nil, nil
	}
}

// relayLog keeps the body byte counts of the requests the browser proxy
// relayed, by method and URL, until the visit that made them logs them.
type relayLog struct {
	mu sync.Mutex
	m  map[string][]*atomic.Int64 // "METHOD url" → counts, in the order sent
}

func relayKey(method, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		u.Fragment, u.RawFragment = "", ""
		rawURL = u.String()
	}
	return strings.ToUpper(method) + " " + rawURL
}

// open is the proxy's Relay.
func (l *relayLog) open(method, rawURL string) *atomic.Int64 {
	n := &atomic.Int64{}
	k := relayKey(method, rawURL)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string][]*atomic.Int64{}
	}
	l.m[k] = append(l.m[k], n)
	return n
}

// take returns the body bytes of the oldest relayed request for method and
// URL not taken yet; ok is false when the proxy relayed none (a request
// inside a TLS tunnel, or one that never left Chromium).
func (l *relayLog) take(method, rawURL string) (n int64, ok bool) {
	k := relayKey(method, rawURL)
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[k]
	if len(q) == 0 {
		return 0, false
	}
	if len(q) == 1 {
		delete(l.m, k)
	} else {
		l.m[k] = q[1:]
	}
	return q[0].Load(), true
}

// forget drops what is left of the requests to hosts: a visit that logged
// its requests leaves nothing for the next one to take by mistake.
func (l *relayLog) forget(hosts []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.m {
		_, raw, _ := strings.Cut(k, " ")
		if u, err := url.Parse(raw); err == nil && slices.Contains(hosts, hostOf(u)) {
			delete(l.m, k)
		}
	}
}

// allow is the browser's gate: a page may load only from its own host
// (and the hosts its redirect chain reached on the same site), each of
// them held (Limiter.Hold) for the whole visit; every request passes the
// same guard, robots.txt and breaker as a direct request and spends a
// token of its host's bucket when it is sent (in the proxy, or here for
// https), and internal/browser keeps one request in flight per host. The browser proxy judges every connection again at
// dial time.
func (c *Client) allow(ctx context.Context, u *url.URL) error {
	if err := c.guard.CheckURL(u); err != nil {
		return err
	}
	v := visitFrom(ctx)
	if v == nil {
		return fmt.Errorf("%w: no page visit", ErrOffSite)
	}
	// Before any lookup or robots.txt fetch: a third party is not even
	// asked for its robots.txt.
	fresh, err := v.scope(ctx, u)
	if err != nil {
		return err
	}
	if fresh {
		// A hop of the page's redirect chain: no host of the chain that is
		// outside the resolve map may lead the browser into it.
		for _, h := range v.reached() {
			if err := c.guard.CheckRedirect(&url.URL{Host: h}, u); err != nil {
				return err
			}
		}
	}
	if err := c.guard.CheckName(ctx, u.Hostname()); err != nil {
		return err
	}
	host := hostOf(u)
	pol := c.policy(host)
	if pol.robotsApply() && u.Path != "/robots.txt" {
		if err := c.checkRobots(ctx, u, pol, true); err != nil {
			return err
		}
	}
	if _, err := c.health.Check(ctx, host); err != nil {
		var be *BlockedError
		if !errors.As(err, &be) || be.Reason == "breaker open" {
			return err
		}
	}
	if fresh {
		// After robots.txt, which a fetch of its own would need the
		// very slot held here.
		if err := v.hold(ctx, host); err != nil {
			return err
		}
	}
	if u.Scheme == "https" {
		// Inside a TLS tunnel the proxy cannot see the request go: it
		// spends its token here.
		return c.limiter.Take(ctx, host)
	}
	// A plain-HTTP request spends its token in the browser proxy, the
	// moment it is sent to the site (BrowserProxyOptions.Pace), under
	// the host's one request in flight that internal/browser holds.
	return nil
}

// viaBrowser loads u in the browser, waiting for a cookie challenge to
// clear, harvests the cookies into the pool and logs every request the
// page made.
func (c *Client) viaBrowser(ctx context.Context, req Request, u *url.URL, pol SitePolicy) (*Response, error) {
	host := hostOf(u)
	fail := func(err error) (*Response, error) {
		c.logRow(ctx, req, u, TierBrowser, c.clock.Now(), 0, 0, 0, err)
		return nil, err
	}
	r, err := c.browser.get(c)
	if err != nil {
		return fail(fmt.Errorf("fetch %s: %w", u.Redacted(), err))
	}
	if err := c.waitHealthy(ctx, host); err != nil {
		return fail(err)
	}
	release, err := c.limiter.Hold(ctx, host)
	if err != nil {
		return fail(err)
	}
	defer release()
	vctx, v := c.startVisit(ctx, host)
	defer v.end()
	defer func() { c.browser.relays.forget(v.reached()) }()
	wall := time.Now()
	page, rerr := r.Render(vctx, u.String(), browser.RenderOptions{
		WaitChallenge:    true,
		ChallengeMarkers: pol.challengeMarkers(),
		CaptchaMarkers:   pol.CaptchaMarkers,
	})
	dur := time.Since(wall)
	switch {
	case rerr == nil:
	case errors.Is(rerr, browser.ErrCaptcha):
		rerr = fmt.Errorf("render %s: %w (%w)", u.Redacted(), ErrCaptcha, rerr)
	case errors.Is(rerr, browser.ErrChallengeNotCleared):
		rerr = fmt.Errorf("render %s: %w (%w)", u.Redacted(), ErrChallengeNotCleared, rerr)
	default:
		rerr = fmt.Errorf("render %s: %w: %w", u.Redacted(), errBrowser, rerr)
	}
	if page == nil {
		return fail(rerr)
	}
	// The render's verdict (a CAPTCHA, a challenge that never cleared)
	// goes on the row of the last main document that came back: the page
	// that was judged. Requests after it (an image the CAPTCHA page asked
	// for, a reload cut short when the tab closed) keep their own outcome,
	// and the verdict must not be lost because one of them came last.
	verdict := -1
	if rerr != nil {
		for i, rec := range page.Requests {
			ru, perr := url.Parse(rec.URL)
			if perr == nil && rec.ResourceType == "Document" && v.reaches(hostOf(ru)) &&
				rec.BlockedReason == "" && rec.Error == "" && rec.Status != 0 {
				verdict = i
			}
		}
	}
	var wire int64
	mainLogged := false
	for i, rec := range page.Requests {
		ru, perr := url.Parse(rec.URL)
		if perr != nil {
			continue
		}
		r := req
		r.URL, r.Method = rec.URL, rec.Method
		if r.Method == "" {
			r.Method = http.MethodGet
		}
		isMain := rec.ResourceType == "Document" && v.reaches(hostOf(ru))
		if !isMain {
			r.Purpose = PurposeAsset
		}
		var err error
		switch {
		case i == verdict:
			err = rerr
		case rec.BlockedReason != "":
			err = fmt.Errorf("%w: %s", errGate, rec.BlockedReason)
		case rec.Error != "":
			err = fmt.Errorf("%w: %s", errBrowser, rec.Error)
		}
		if isMain && rec.BlockedReason == "" {
			mainLogged = true
			// A 429 or 503 with Retry-After holds the host as on the
			// direct tier.
			var hdr http.Header
			if rec.RetryAfter != "" {
				hdr = http.Header{"Retry-After": {rec.RetryAfter}}
			}
			if hErr := c.record(ctx, hostOf(ru), rec.Status, hdr, nil); hErr != nil {
				c.log.Error("record host health", "host", hostOf(ru), "error", hErr)
			}
		}
		at := rec.StartedAt
		if at.IsZero() || c.clockIsFake() {
			at = c.clock.Now()
		}
		// Chromium tried every request the gate let through, whether or
		// not an answer came; one from its cache never reached the host.
		reach := rowSent
		bytes, dur := rec.Bytes, rec.Duration
		if rec.BlockedReason != "" || rec.FromCache {
			reach, bytes, dur = rowUnsent, 0, 0
		} else if n, ok := c.browser.relays.take(r.Method, rec.URL); ok {
			// The body bytes the site sent, counted by the proxy as
			// on the direct tier. Without them (https, through a
			// tunnel) Chromium's figure stands, headers included.
			bytes = n
		}
		wire += bytes
		c.writeRow(ctx, r, ru, TierBrowser, at, rec.Status, bytes, 0, dur, err, reach)
	}
	if rerr != nil {
		if verdict < 0 {
			// No document came back whole: one more row carries the
			// verdict. Its status only when no row above has one, so rows
			// with a status still match the requests the site saw.
			status := page.Status
			if mainLogged {
				status = 0
			}
			// With the page's status it stands for the page's request;
			// without one, it is a note on the page's row above, or, when
			// there is none, the page that never left.
			reach := rowSent
			switch {
			case status == 0 && mainLogged:
				reach = rowNote
			case status == 0:
				reach = rowUnsent
			}
			c.writeRow(ctx, req, u, TierBrowser, c.clock.Now(), status, 0, 0, dur, rerr, reach)
		}
		return nil, rerr
	}
	if err := c.harvest(ctx, host, pol, page.Cookies); err != nil {
		return nil, err
	}
	resp := &Response{
		URL:       page.URL,
		Status:    page.Status,
		Header:    http.Header{"Content-Type": {"text/html; charset=utf-8"}},
		Body:      []byte(page.HTML),
		Tier:      TierBrowser,
		WireBytes: wire,
		Duration:  dur,

		Subrequests: page.Requests,
	}
	if req.Head && req.MaxBytes > 0 && int64(len(resp.Body)) > req.MaxBytes {
		// Chromium reads a page whole; the head read keeps what a direct
		// one would have, cut on a character boundary.
		cut := int(req.MaxBytes)
		for cut > 0 && !utf8.RuneStart(resp.Body[cut]) {
			cut--
		}
		resp.Body, resp.Truncated = resp.Body[:cut], true
	}
	if page.Status == http.StatusOK && req.Purpose != model.PurposeRobots {
		if err := c.noteURLState(ctx, u.String(), resp, nil); err != nil {
			c.log.Error("update url state", "url", u.Redacted(), "error", err)
		}
	}
	return resp, nil
}

// clockIsFake: crawl_log rows of browser requests carry Chromium's wall
// stamps, unless the client runs on a test clock, where rows must agree
// with the other rows' time.
func (c *Client) clockIsFake() bool {
	_, real := c.clock.(RealClock)
	return !real
}

// harvest replaces host's cookie pool with what the browser holds, capped
// at the site's cookie TTL.
func (c *Client) harvest(ctx context.Context, host string, pol SitePolicy, cookies []model.Cookie) error {
	now := c.clock.Now().UTC()
	var keep []model.Cookie
	for _, ck := range cookies {
		if normalizeHostName(ck.Host) != host {
			continue
		}
		ck.Host = host
		ck.Source = "browser"
		ck.CreatedAt = now
		if pol.SiteID != 0 {
			id := pol.SiteID
			ck.SiteID = &id
		}
		if pol.CookieTTL > 0 {
			capAt := now.Add(pol.CookieTTL)
			if ck.ExpiresAt == nil || ck.ExpiresAt.After(capAt) {
				ck.ExpiresAt = &capAt
			}
		}
		keep = append(keep, ck)
	}
	if err := c.store.DeleteCookies(ctx, host); err != nil {
		return err
	}
	if len(keep) > 0 {
		if err := c.store.PutCookies(ctx, keep); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.harvests[host]++
	c.mu.Unlock()
	return nil
}
