package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"zhizhi/internal/model"
)

// Defaults for RenderOptions.
const (
	defaultMaxWait = 20 * time.Second
	defaultSettle  = 500 * time.Millisecond
	// settleCap bounds the wait for a quiet network once the page is
	// ready: a page that polls forever still gets rendered.
	settleCap = 5 * time.Second
	pollEvery = 100 * time.Millisecond
	// reprobe is how often the DOM is read again when nothing in the
	// network changed, for challenges that clear without a reload.
	reprobe = time.Second
)

// RenderOptions tune one Render.
type RenderOptions struct {
	// WaitChallenge waits until the page is no longer a cookie challenge:
	// the main document's status is not 412 and none of ChallengeMarkers
	// is in its HTML (after the page's own script set a cookie and
	// reloaded). Without it Render returns the first loaded document,
	// challenge or not.
	WaitChallenge bool

	// MaxWait bounds the wait for the challenge to clear; zero means 20 s.
	// Running out gives ErrChallengeNotCleared.
	MaxWait time.Duration

	// ChallengeMarkers are strings whose presence in the HTML means the
	// challenge is still in place (a site's resilience rules name them).
	ChallengeMarkers []string

	// CaptchaMarkers mark a CAPTCHA wall in the visible text; nil means
	// DefaultCaptchaMarkers. Finding one gives ErrCaptcha.
	CaptchaMarkers []string

	// Settle is how long the network must stay quiet after the page is
	// ready, so content loaded by XHR is in the HTML; zero means 500 ms.
	Settle time.Duration
}

// Page is a rendered page.
type Page struct {
	URL    string // final URL, after redirects and reloads
	Status int    // HTTP status of the main document
	Title  string
	HTML   string // the document after scripts ran, UTF-8

	// Challenged tells that a cookie challenge was met (and, when Render
	// returned no error, passed).
	Challenged bool

	// Cookies are all cookies the browser holds for the page's host
	// (Source "browser"), for the direct tier to reuse.
	Cookies []model.Cookie

	// Requests is every network request the tab made or was refused, in
	// the order Chromium started them.
	Requests []RequestRecord
}

// pageProbe is what Render reads from the document.
type pageProbe struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	Text  string `json:"text"`
	HTML  string `json:"html"`
	Ready string `json:"ready"`
}

const probeJS = `(() => {
	const d = document;
	const dt = d.doctype ? new XMLSerializer().serializeToString(d.doctype) + "\n" : "";
	return {
		url: location.href,
		title: d.title || "",
		text: d.body ? d.body.innerText : "",
		html: d.documentElement ? dt + d.documentElement.outerHTML : "",
		ready: d.readyState,
	};
})()`

// Render opens a new tab in a fresh browser context (no cookies from other
// renders), loads rawURL with every request passing the gate, optionally
// waits for a cookie challenge to clear, and returns the final page. The tab
// is closed before Render returns, always.
//
// On ErrCaptcha, ErrChallengeNotCleared, ErrBlocked or a timeout, the
// returned Page is not nil: it holds the requests made so far, so the
// caller can still log them.
func (b *Browser) Render(ctx context.Context, rawURL string, opts RenderOptions) (res *Page, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("render %s: not an absolute http(s) URL", rawURL)
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = defaultMaxWait
	}
	if opts.Settle <= 0 {
		opts.Settle = defaultSettle
	}
	if opts.CaptchaMarkers == nil {
		opts.CaptchaMarkers = DefaultCaptchaMarkers
	}
	if b.closed() {
		return nil, fmt.Errorf("render %s: %w", rawURL, ErrClosed)
	}

	select {
	case b.tabs <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("render %s: wait for a free tab: %w", rawURL, ctx.Err())
	case <-b.done:
		return nil, fmt.Errorf("render %s: %w", rawURL, ErrClosed)
	}
	defer func() { <-b.tabs }()

	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	tr := newTracker(b.slots.release)
	tabCtx, cancelTab := chromedp.NewContext(b.browserCtx,
		chromedp.WithNewBrowserContext(),
		chromedp.WithListener(tr.handle),
	)
	// A render that times out or is cancelled must not hang on a stuck
	// navigation: the tab is closed, but only after a grace period in
	// which the pending gate decisions refuse their paused requests on a
	// live tab (a paused request left undecided when the tab goes away can
	// be released by Chromium and reach the site untallied).
	stopTie := context.AfterFunc(ctx, func() { time.AfterFunc(gateGrace, cancelTab) })
	gates := &gateSet{}
	defer func() {
		stopTie()
		gates.closing.Store(true) // from now on a paused request is refused at once
		cancel()                  // pending decisions see the end and refuse
		leave(tabCtx, tr)         // stop the page's scripts asking for more
		gates.reqs.Wait()         // every paused request answered, tab still alive
		if res != nil {
			// After leave: the answers of requests on the wire when the
			// render ended are in, as the site saw them.
			res.Requests = tr.snapshot()
		}
		cancelTab() // closes the tab and disposes its browser context
		gates.listener.Wait()
		tr.releaseAll()
	}()

	p, err := b.render(ctx, tabCtx, tr, gates, u.String(), opts)
	if err != nil {
		if p == nil {
			p = &Page{URL: u.String()}
		}
		// A timeout or cancellation must stay visible to errors.Is, whatever
		// step it interrupted.
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) &&
			!errors.Is(err, ErrCaptcha) && !errors.Is(err, ErrChallengeNotCleared) {
			err = fmt.Errorf("%w (%w)", err, cerr)
		}
		return p, fmt.Errorf("render %s: %w", rawURL, err)
	}
	return p, nil
}

// RequestInfo tells the Allow callback what the request it decides is for;
// RequestInfoFrom reads it from the callback's context.
type RequestInfo struct {
	// ResourceType is Chromium's: Document, Script, XHR, Fetch, ...
	ResourceType string
	// Navigation is a request for the tab's top-level document: the page
	// itself, a reload, or a hop of its redirect chain.
	Navigation bool
	// Redirect is a request Chromium makes because the server answered
	// the previous hop of the same request with a redirect.
	Redirect bool
}

type requestInfoKey struct{}

// RequestInfoFrom returns what the request an Allow callback is deciding
// is for; ok is false outside a render's gate.
func RequestInfoFrom(ctx context.Context) (info RequestInfo, ok bool) {
	info, ok = ctx.Value(requestInfoKey{}).(RequestInfo)
	return info, ok
}

// gateSet tracks the goroutines that decide paused requests.
type gateSet struct {
	listener sync.WaitGroup // the goroutine reading RequestPaused events
	reqs     sync.WaitGroup // one per paused request being decided
	closing  atomic.Bool    // the render is ending: refuse without deciding
}

// gateGrace is how long a cancelled render keeps its tab open so pending
// gate decisions can refuse their requests.
const gateGrace = 2 * time.Second

// leaveGrace bounds how long leave tries to blank the tab: a safety net
// for a tab that neither goes blank nor goes away.
const leaveGrace = 10 * time.Second

// leave navigates the tab to about:blank, so the old document's scripts and
// timers stop, and waits until the blank page is committed with no
// navigation pending. The tab must be blank before chromedp detaches from
// it (it detaches first and closes after): a page still running then (a
// challenge that reloads itself, caught mid-reload so that the first
// navigation away did not take) sends requests that no gate pauses,
// without the user agent override, past the limiter and unlogged — seen on
// a busy machine as a burst of reloads at one instant.
func leave(tabCtx context.Context, tr *tracker) {
	gone, err := chromedp.Detached(tabCtx)
	if err != nil {
		return // no tab was opened
	}
	ctx, cancel := context.WithTimeout(tabCtx, leaveGrace)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	// Requests already sent get their answers first (the gate refuses any
	// new one now), so the record matches what the site saw.
	for tr.onWire() > 0 {
		select {
		case <-tick.C:
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
	for !tr.blank() {
		_, _ = chromedp.Call(ctx, page.StopLoading, cdp.Empty{})
		_, _ = chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: "about:blank"})
		if tr.blank() {
			return
		}
		select {
		case <-tick.C:
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (b *Browser) render(ctx, tabCtx context.Context, tr *tracker, gates *gateSet, target string, opts RenderOptions) (*Page, error) {
	if err := chromedp.Do(tabCtx); err != nil {
		return nil, fmt.Errorf("open tab: %w", err)
	}
	c := chromedp.FromContext(tabCtx)
	tr.setMainFrame(cdp.FrameID(c.Target.TargetID))

	// Subscribe before Fetch.enable so no paused request is missed; each
	// one is decided on its own goroutine because the gate may wait (for
	// the host's slot, or for the fetcher's robots check).
	paused := chromedp.Events(tabCtx, fetch.RequestPaused)
	gates.listener.Add(1)
	go func() {
		defer gates.listener.Done()
		for ev, err := range paused {
			if err != nil {
				return
			}
			if gates.closing.Load() {
				// The render is ending: refuse here, on the live tab,
				// rather than start a decision nobody waits for.
				b.refuse(tabCtx, tr, &ev, "render ended")
				continue
			}
			gates.reqs.Add(1)
			go func() {
				defer gates.reqs.Done()
				b.gate(ctx, tabCtx, tr, &ev)
			}()
		}
	}()
	if _, err := chromedp.Call(tabCtx, fetch.Enable, fetch.EnableParams{}); err != nil {
		return nil, fmt.Errorf("enable request gate: %w", err)
	}
	if _, err := chromedp.Call(tabCtx, emulation.SetUserAgentOverride,
		emulation.SetUserAgentOverrideParams{UserAgent: b.userAgent}); err != nil {
		return nil, fmt.Errorf("set user agent: %w", err)
	}
	// A service worker would answer from its own fetches, out of the gate.
	if _, err := chromedp.Call(tabCtx, network.SetBypassServiceWorker,
		network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
		return nil, fmt.Errorf("bypass service workers: %w", err)
	}

	nav, err := chromedp.Call(tabCtx, page.Navigate, page.NavigateParams{URL: target})
	if err != nil {
		return nil, fmt.Errorf("navigate: %w", err)
	}
	if nav.ErrorText != "" {
		if reason := tr.blockedReasonFor(target); reason != "" {
			return nil, fmt.Errorf("%w: %s", ErrBlocked, reason)
		}
		return nil, fmt.Errorf("navigate: %s", nav.ErrorText)
	}

	start := time.Now()
	var (
		probe      pageProbe
		probedAt   time.Time
		probedKey  [3]int
		challenged bool
		readySince time.Time
	)
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	for {
		st := tr.state()
		challenged = challenged || st.saw412
		ready := st.committed && st.loaded && !st.navigating
		if ready {
			// Read the DOM when the document changed, or now and then for
			// challenges that clear in place.
			key := [3]int{st.loads, st.status, boolInt(st.loaded)}
			if key != probedKey || time.Since(probedAt) >= reprobe || st.quietFor >= opts.Settle {
				p, err := chromedp.Run(tabCtx, chromedp.Evaluate[pageProbe](probeJS))
				if err != nil {
					if ctx.Err() != nil {
						return b.partial(probe, st.status, challenged), err
					}
					// The document may have gone between the state and the
					// read (a reload); look again on the next tick.
					b.log.Debug("read page", "url", target, "error", err)
					ready = false
				} else {
					probe, probedAt, probedKey = p, time.Now(), key
				}
			}
		}
		if ready {
			if m := findCaptcha(probe.Title, probe.Text, st.status, opts.CaptchaMarkers); m != "" {
				b.log.Warn("captcha page: stopping", "url", probe.URL, "status", st.status, "marker", m)
				return b.partial(probe, st.status, challenged), fmt.Errorf("%w (marker %q)", ErrCaptcha, m)
			}
			challenge := st.status == 412 || findMarker(probe.HTML, opts.ChallengeMarkers) != ""
			challenged = challenged || challenge
			if challenge && opts.WaitChallenge {
				readySince = time.Time{}
			} else {
				if readySince.IsZero() {
					readySince = time.Now()
				}
				if st.quietFor >= opts.Settle || time.Since(readySince) >= settleCap {
					if probedAt.Before(readySince) || time.Since(probedAt) > opts.Settle {
						// The probe predates the quiet: read the final DOM.
						if p, err := chromedp.Run(tabCtx, chromedp.Evaluate[pageProbe](probeJS)); err == nil {
							probe = p
						}
					}
					return b.finish(tabCtx, c.BrowserContextID, probe, st.status, challenged)
				}
			}
		} else {
			readySince = time.Time{}
		}
		if opts.WaitChallenge && challenged && time.Since(start) > opts.MaxWait {
			b.log.Warn("cookie challenge not cleared", "url", target, "status", st.status, "max_wait", opts.MaxWait)
			return b.partial(probe, st.status, challenged), ErrChallengeNotCleared
		}
		select {
		case <-ctx.Done():
			return b.partial(probe, st.status, challenged), fmt.Errorf("wait for page: %w", ctx.Err())
		case <-ticker.C:
		}
	}
}

// gate decides one paused request: continue it, or fail it with the reason
// recorded. Nothing reaches the network before this returns.
func (b *Browser) gate(ctx, tabCtx context.Context, tr *tracker, ev *fetch.EventRequestPaused) {
	if ev.Request == nil {
		return
	}
	tr.hold()
	defer tr.unhold()
	info := RequestInfo{
		ResourceType: string(ev.ResourceType),
		Navigation:   ev.ResourceType == network.ResourceTypeDocument && tr.isMainFrame(ev.FrameID),
		// A redirect hop is paused under a new interception id naming the
		// one that was redirected; it also keeps its network id, whose
		// slot the previous hop still holds.
		Redirect: ev.RedirectedRequestID != "" || ev.NetworkID != "" && tr.heldHost(ev.NetworkID) != "",
	}
	u, reason, host := b.precheck(ev.Request.URL, string(ev.ResourceType))
	// The host's slot comes before the token: a token spent while the
	// request still waits for the host's previous one would date the
	// request earlier than it reaches the site, and the site would see
	// requests closer together than the bucket allows.
	if reason == "" && host != "" && ev.NetworkID != "" {
		if tr.heldHost(ev.NetworkID) != host {
			tr.releaseID(ev.NetworkID) // an earlier redirect hop's host
			if err := b.slots.acquire(ctx, host); err != nil {
				reason = "render ended while waiting for the host: " + err.Error()
			} else {
				tr.setHeld(ev.NetworkID, host)
			}
		}
	}
	if reason == "" && host != "" {
		if err := b.opts.Allow(context.WithValue(ctx, requestInfoKey{}, info), u); err != nil {
			reason = err.Error()
		}
	}
	if reason == "" {
		if _, err := chromedp.Call(tabCtx, fetch.ContinueRequest,
			fetch.ContinueRequestParams{RequestID: ev.RequestID}); err != nil {
			tr.releaseID(ev.NetworkID)
			b.log.Debug("continue request", "url", ev.Request.URL, "error", err)
		}
		return
	}
	b.refuse(tabCtx, tr, ev, reason)
}

// refuse fails a paused request with its reason recorded.
func (b *Browser) refuse(tabCtx context.Context, tr *tracker, ev *fetch.EventRequestPaused, reason string) {
	if ev.Request == nil {
		return
	}
	tr.refuse(ev.NetworkID, ev.Request.URL, ev.Request.Method, string(ev.ResourceType), reason)
	b.log.Info("browser request refused", "url", ev.Request.URL, "type", ev.ResourceType, "reason", reason)
	if _, err := chromedp.Call(tabCtx, fetch.FailRequest, fetch.FailRequestParams{
		RequestID:   ev.RequestID,
		ErrorReason: network.ErrorReasonBlockedByClient,
	}); err != nil {
		b.log.Debug("fail request", "url", ev.Request.URL, "error", err)
	}
}

// precheck makes the refusals that need neither the host's slot nor the
// Allow callback: it returns why a request must not go out ("" when it may
// go on to the host's slot and Allow) and the host ("" for URLs that touch
// no network).
func (b *Browser) precheck(rawURL, resourceType string) (u *url.URL, reason, host string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "unparsable URL", ""
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return u, "", "" // served by the renderer itself
	case "http", "https":
	default:
		return u, fmt.Sprintf("scheme %q not allowed", u.Scheme), ""
	}
	// Cheap refusals first: a polite crawler must not even fetch a third
	// party's robots.txt for an image it will never load.
	if b.blocked[strings.ToLower(resourceType)] {
		return u, fmt.Sprintf("resource type %s not fetched by policy", resourceType), ""
	}
	if u.Path == "/favicon.ico" {
		// Chromium's own request for the site's icon: zhizhi needs none.
		// When it skips this gate, the proxy answers it instead.
		return u, "the site's icon is not fetched by policy", ""
	}
	return u, "", strings.ToLower(u.Hostname())
}

// finish collects the cookies of the page's host and builds the Page.
func (b *Browser) finish(tabCtx context.Context, bctx cdp.BrowserContextID, probe pageProbe, status int, challenged bool) (*Page, error) {
	p := b.partial(probe, status, challenged)
	host := ""
	if u, err := url.Parse(probe.URL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	res, err := chromedp.CallBrowser(tabCtx, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: bctx})
	if err != nil {
		return p, fmt.Errorf("read cookies: %w", err)
	}
	now := b.opts.Now()
	for _, c := range res.Cookies {
		if c == nil || !domainMatch(host, c.Domain) {
			continue
		}
		mc := model.Cookie{
			Host:      host,
			Name:      c.Name,
			Value:     c.Value,
			Path:      c.Path,
			Source:    "browser",
			CreatedAt: now,
		}
		if !c.Session && c.Expires > 0 {
			t := time.Unix(0, int64(c.Expires*float64(time.Second))).UTC()
			mc.ExpiresAt = &t
		}
		p.Cookies = append(p.Cookies, mc)
	}
	if challenged {
		b.log.Info("cookie challenge passed", "url", p.URL, "status", status, "cookies", len(p.Cookies))
	}
	return p, nil
}

func (b *Browser) partial(probe pageProbe, status int, challenged bool) *Page {
	return &Page{
		URL:        probe.URL,
		Status:     status,
		Title:      probe.Title,
		HTML:       probe.HTML,
		Challenged: challenged,
	}
}

// domainMatch tells whether a cookie stored for domain (".a.gov.cn" for a
// domain cookie, "www.a.gov.cn" for a host-only one) is sent to host.
func domainMatch(host, domain string) bool {
	domain = strings.ToLower(strings.TrimPrefix(domain, "."))
	if host == "" || domain == "" {
		return false
	}
	return host == domain || strings.HasSuffix(host, "."+domain)
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}
