package acquire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// POST /v1/render: one page through the crawler's browser tier.
const (
	renderPattern   = "POST /v1/render"
	providerBrowser = "browser"

	// DefaultRenderConcurrency is how many renders a process runs at
	// once when RenderTier.MaxConcurrent is zero.
	DefaultRenderConcurrency = 2
	// DefaultBrowserSeconds bounds one render when
	// RenderTier.BrowserSeconds is zero.
	DefaultBrowserSeconds = 60 * time.Second
	// renderRetryAfter is the Retry-After of a render refused because
	// every slot is taken.
	renderRetryAfter = 5 * time.Second
	// maxSubrequests bounds the requests listed in the evidence.
	maxSubrequests = 100
)

// Error codes of /v1/render.
const (
	CodeBrowserUnavailable = "BROWSER_UNAVAILABLE"
	CodeRenderBusy         = "RENDER_BUSY"
	CodeChallengeFailed    = "CHALLENGE_FAILED"
)

// RenderTier is what POST /v1/render works with: the polite client whose
// browser tier (fetch.ClientOptions.Browser) draws the page, the number of
// renders at once, and the time one render may take. Every request the
// page makes goes through that client's gate: the SSRF guard, robots.txt,
// the breaker, the host's bucket, one request in flight per host, and its
// crawl_log row.
type RenderTier struct {
	// Client renders; nil means Deps.Client. Without a browser tier of
	// its own, every render answers 503 BROWSER_UNAVAILABLE.
	Client *fetch.Client
	// MaxConcurrent is how many renders run at once in this process;
	// zero means DefaultRenderConcurrency. One more is refused at once
	// with 503 RENDER_BUSY and Retry-After, never queued.
	MaxConcurrent int
	// BrowserSeconds bounds one render, the wait for the host's turn
	// included; a request's timeout may only lower it. Zero means
	// DefaultBrowserSeconds.
	BrowserSeconds time.Duration

	once  sync.Once
	slots chan struct{}
	limit time.Duration
}

func (t *RenderTier) init() {
	t.once.Do(func() {
		n := t.MaxConcurrent
		if n <= 0 {
			n = DefaultRenderConcurrency
		}
		t.slots = make(chan struct{}, n)
		t.limit = t.BrowserSeconds
		if t.limit <= 0 {
			t.limit = DefaultBrowserSeconds
		}
	})
}

// take claims a render slot without waiting; release gives it back.
func (t *RenderTier) take() (release func(), ok bool) {
	select {
	case t.slots <- struct{}{}:
		return func() { <-t.slots }, true
	default:
		return nil, false
	}
}

// Subrequest is one request the rendered page made, or that zhizhi
// refused before it left (Refused says why).
type Subrequest struct {
	URL        string `json:"url"`
	Method     string `json:"method"`
	Type       string `json:"type"` // Chromium's resource type: Document, Script, XHR, Fetch, ...
	Status     int    `json:"status"`
	Bytes      int64  `json:"bytes"`
	DurationMS int64  `json:"duration_ms"`
	FromCache  bool   `json:"from_cache,omitempty"`
	Refused    string `json:"refused,omitempty"`
	Error      string `json:"error,omitempty"`
}

func browserUnavailable(why string) *failure {
	return &failure{status: http.StatusServiceUnavailable, code: CodeBrowserUnavailable,
		msg: why + "; /v1/fetch still fetches pages that need no browser"}
}

// renderPage serves POST /v1/render.
func (a *API) renderPage(w http.ResponseWriter, r *http.Request) {
	t := a.d.Render
	if t == nil {
		a.fail(w, r, browserUnavailable("this server runs without a browser (Chromium is not installed or not configured), so it cannot render pages"))
		return
	}
	t.init()
	client := t.Client
	if client == nil {
		client = a.d.Client
	}
	req, err := a.parseRequest(w, r)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	if len(req.intent) > 0 {
		a.fail(w, r, invalid("%s: POST /v1/render always uses the browser; the provider router's intent fields are for POST /v1/fetch", req.intent[0]))
		return
	}
	// The render's time: the request's timeout, at most the tier's
	// browser seconds.
	req.Timeout = min(req.Timeout, t.limit)
	// Metered like a fetch, and the render's browser seconds besides:
	// its whole time held before, what it used charged after.
	res, ok := a.reserve(w, r, budget.Cost{Requests: 1, Bytes: req.MaxBytes, BrowserSeconds: wholeSeconds(req.Timeout)})
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), req.Timeout)
	defer cancel()
	started := time.Now()
	pg, f := a.render(ctx, t, client, req)
	var used time.Duration
	switch {
	case f == nil && !pg.FromSnapshot:
		used = pg.browser
	case f != nil && !f.notSent:
		used = time.Since(started) // the browser's time is not known apart from the wait
	}
	var settled *page
	if pg != nil {
		settled = pg.page
	}
	a.settle(r, res, settled, f, wholeSeconds(used))
	if f != nil {
		a.d.Logger.Info("acquire render refused or failed", "url", req.URL, "code", f.code, "status", f.status,
			"elapsed_ms", time.Since(started).Milliseconds())
		a.fail(w, r, f)
		return
	}
	doc, err := build(req, pg.page, a.d.Now())
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	acq := &doc.Acquisition
	acq.Provider, acq.ProviderReason = providerBrowser, "asked for: POST /v1/render always uses the browser"
	if pg.FromSnapshot {
		acq.ProviderReason = "answered from a snapshot the browser kept, younger than maxAge"
	}
	pg.evidence(acq)
	a.d.Logger.Info("acquire render", "url", req.URL, "final_url", pg.FinalURL, "status", pg.Status,
		"from_snapshot", pg.FromSnapshot, "raw_sha256", pg.RawSHA256, "subrequests", pg.subsTotal,
		"browser_ms", pg.browser.Milliseconds(), "elapsed_ms", time.Since(started).Milliseconds())
	writeJSON(w, http.StatusOK, struct {
		Success bool      `json:"success"`
		Data    *Document `json:"data"`
	}{true, doc})
}

// evidence adds the browser's record to acq: its seconds and the page's
// requests (nothing for an answer from a snapshot).
func (pg *rendered) evidence(acq *Acquisition) {
	if pg.FromSnapshot {
		return
	}
	secs := math.Round(pg.browser.Seconds()*1000) / 1000
	acq.Evidence.BrowserSeconds = &secs
	acq.Evidence.Subrequests = pg.subs
	acq.Evidence.SubrequestsTotal = pg.subsTotal
}

// wholeSeconds is d in whole seconds, rounded up: browser seconds are
// budgeted as integers, and a started second counts.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}

// rendered is a page drawn by the browser, with what it took.
type rendered struct {
	*page
	browser   time.Duration
	subs      []Subrequest
	subsTotal int
}

// render checks the URL, answers from a young enough snapshot the browser
// tier kept, or claims a slot and renders the page through client.
func (a *API) render(ctx context.Context, t *RenderTier, client *fetch.Client, req *fetchRequest) (*rendered, *failure) {
	freq := fetch.Request{URL: req.URL, Purpose: model.PurposeProbe, Accept: acceptHeader, MaxBytes: req.MaxBytes,
		Tier: fetch.TierBrowser}
	// Refused before Chromium hears of it, whatever a snapshot holds.
	if err := client.CheckTarget(ctx, freq); err != nil {
		return nil, fetchFailure(ctx, req, err, a.d.Now())
	}
	if req.MaxAge > 0 {
		snap, body, err := a.d.Store.FetchSnapshot(ctx, req.URL)
		switch {
		case err == nil && snap.Tier == fetch.TierBrowser && a.d.Now().Sub(snap.FetchedAt) < req.MaxAge && snap.RawBytes <= req.MaxBytes:
			return &rendered{page: &page{SourceURL: req.URL, FinalURL: snap.FinalURL, Status: snap.Status,
				ContentType: snap.ContentType, Body: body, RawRef: snap.RawPath, RawSHA256: snap.RawSHA256,
				FetchedAt: snap.FetchedAt, FromSnapshot: true, Tier: snap.Tier}}, nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			a.d.Logger.Warn("acquire render: read snapshot", "url", req.URL, "error", err)
		}
	}
	release, ok := t.take()
	if !ok {
		return nil, &failure{status: http.StatusServiceUnavailable, code: CodeRenderBusy, retryAfter: renderRetryAfter,
			msg: fmt.Sprintf("all %d browser slots of this server are busy; ask again in a few seconds (renders are not queued)", cap(t.slots))}
	}
	defer release()
	wall := time.Now()
	resp, err := client.Do(ctx, freq)
	spent := time.Since(wall)
	if err != nil {
		return nil, renderFailure(ctx, req, err, a.d.Now())
	}
	if resp.Status == http.StatusPreconditionFailed {
		// The shield's own status on the final document: never answered
		// as the page.
		return nil, challengeFailed(fmt.Sprintf("the page %s is still the site's challenge (HTTP 412) after the browser ran it", resp.URL))
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &failure{status: http.StatusBadGateway, code: CodeSiteError,
			msg:     fmt.Sprintf("the site answered HTTP %d for %s", resp.Status, resp.URL),
			details: map[string]any{"statusCode": resp.Status, "url": resp.URL}}
	}
	if int64(len(resp.Body)) > req.MaxBytes {
		return nil, &failure{status: http.StatusBadGateway, code: CodeTooLarge,
			msg: fmt.Sprintf("the rendered page is larger than %d bytes (max_bytes); nothing was kept", req.MaxBytes)}
	}
	ct := resp.Header.Get("Content-Type")
	pg := &page{SourceURL: req.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct, Body: resp.Body,
		FetchedAt: a.d.Now().UTC(), WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier}
	out := &rendered{page: pg, browser: spent, subsTotal: len(resp.Subrequests)}
	for _, rec := range resp.Subrequests {
		if rec.BlockedReason == "" && !rec.FromCache {
			pg.Attempts++
		}
		if len(out.subs) < maxSubrequests {
			out.subs = append(out.subs, Subrequest{URL: rec.URL, Method: rec.Method, Type: rec.ResourceType,
				Status: rec.Status, Bytes: rec.Bytes, DurationMS: rec.Duration.Milliseconds(), FromCache: rec.FromCache,
				Refused: rec.BlockedReason, Error: rec.Error})
		}
	}
	snap := &store.FetchSnapshot{URL: req.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct,
		WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, FetchedAt: pg.FetchedAt}
	if err := a.d.Store.SaveFetchSnapshot(ctx, snap, resp.Body); err != nil {
		a.d.Logger.Error("acquire render: keep rendered page", "url", req.URL, "error", err)
		return nil, &failure{status: http.StatusInternalServerError, code: CodeInternal,
			msg: "the page was rendered but could not be stored; try again later"}
	}
	pg.RawRef, pg.RawSHA256 = snap.RawPath, snap.RawSHA256
	return out, nil
}

func challengeFailed(msg string) *failure {
	return &failure{status: http.StatusBadGateway, code: CodeChallengeFailed,
		msg: msg + "; zhizhi answers no challenge page as content"}
}

// renderFailure adds the browser tier's own failures to fetchFailure's:
// no browser, and a challenge the browser could not pass.
func renderFailure(ctx context.Context, req *fetchRequest, err error, now time.Time) *failure {
	var blocked *fetch.BlockedError
	switch {
	case errors.As(err, &blocked):
		// A host stopped earlier (its breaker, a CAPTCHA seen before).
	case errors.Is(err, fetch.ErrNoBrowser):
		return browserUnavailable("this server cannot start its browser (" + err.Error() + ")")
	case errors.Is(err, fetch.ErrChallengeNotCleared):
		return challengeFailed("the site's challenge was still in place when the browser's wait ran out")
	case errors.Is(err, fetch.ErrCaptcha):
		return challengeFailed("the page asks for a human check (a CAPTCHA), which zhizhi never solves or bypasses; " +
			"the host is left alone until a person clears it")
	}
	return fetchFailure(ctx, req, err, now)
}
