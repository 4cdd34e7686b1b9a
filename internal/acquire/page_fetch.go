package acquire

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// acceptHeader asks for what the API can turn into Markdown.
const acceptHeader = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"

// page is one fetched (or remembered) answer.
type page struct {
	SourceURL, FinalURL string
	Status              int
	ContentType         string
	Body                []byte // as served: content-decoded, charset untouched
	RawRef, RawSHA256   string
	FetchedAt           time.Time
	FromSnapshot        bool
	WireBytes           int64
	Duration            time.Duration
	Tier                string
	Attempts            int
	// escalate says why the browser should draw the page instead (a
	// challenge, a shell); such a direct answer is not kept.
	escalate string
}

// fetchPage serves POST /v1/fetch and POST /v2/scrape: the router
// (router.go) chooses the provider, the page is got, and the answer says
// which provider ran and why.
func (a *API) fetchPage(w http.ResponseWriter, r *http.Request) {
	req, err := a.parseRequest(w, r)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	rt, f := a.decide(r.Context(), r, req)
	if f != nil {
		a.d.Logger.Info("acquire fetch: no provider", "url", req.URL, "code", f.code, "error", f.msg)
		a.fail(w, r, f)
		return
	}
	// A request that may use the browser holds its browser time too; what
	// it did not use is released when it is settled.
	est := budget.Cost{Requests: 1, Bytes: req.MaxBytes}
	if rt.provider == providerBrowser || rt.escalate {
		est.BrowserSeconds = rt.seconds
	}
	res, ok := a.reserve(w, r, est)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), req.Timeout)
	defer cancel()
	started := time.Now()
	pg, rd, used, f := a.run(ctx, req, rt)
	a.settle(r, res, pg, f, wholeSeconds(used))
	if f != nil {
		a.d.Logger.Info("acquire fetch refused or failed", "url", req.URL, "code", f.code, "status", f.status,
			"provider", rt.provider, "elapsed_ms", time.Since(started).Milliseconds())
		a.fail(w, r, f)
		return
	}
	doc, err := build(req, pg, a.d.Now())
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	acq := &doc.Acquisition
	acq.Provider, acq.ProviderReason = rt.provider, rt.reason
	switch {
	case pg.FromSnapshot:
		acq.Provider, acq.ProviderReason = providerOf(pg.Tier), "answered from a snapshot younger than maxAge: no provider ran now"
	case rd != nil:
		rd.evidence(acq)
	}
	a.d.Logger.Info("acquire fetch", "url", req.URL, "final_url", pg.FinalURL, "status", pg.Status,
		"provider", acq.Provider, "provider_reason", acq.ProviderReason,
		"from_snapshot", pg.FromSnapshot, "raw_sha256", pg.RawSHA256, "elapsed_ms", time.Since(started).Milliseconds())
	writeJSON(w, http.StatusOK, struct {
		Success bool      `json:"success"`
		Data    *Document `json:"data"`
	}{true, doc})
}

// providerOf names the provider of a tier.
func providerOf(tier string) string {
	if tier == fetch.TierBrowser {
		return providerBrowser
	}
	return providerDirect
}

// run gets req's page as rt says: directly (from a young enough snapshot,
// or asking the site) and, when the direct answer is a challenge or a
// script's shell and rt allows, again in the browser; or in the browser at
// once. used is the browser time spent.
func (a *API) run(ctx context.Context, req *fetchRequest, rt *route) (*page, *rendered, time.Duration, *failure) {
	if rt.provider == providerBrowser {
		return a.renderRouted(ctx, req, rt, nil)
	}
	pg, f := a.acquire(ctx, req, rt.escalate)
	if f != nil || pg.escalate == "" {
		if f == nil && !pg.FromSnapshot {
			if shell := looksLikeShell(pg.Body, pg.ContentType); shell != "" {
				// Answered as served; the caller learns what it lacks.
				rt.reason += "; " + shell + ", which the browser would draw"
				if rt.whyNot != "" {
					rt.reason += " (" + rt.whyNot + ")"
				}
			}
		}
		return pg, nil, 0, f
	}
	if !rt.escalate {
		why := rt.whyNot
		if why == "" {
			why = "the browser may not run"
		}
		return nil, nil, 0, &failure{status: http.StatusUnprocessableEntity, code: CodeBrowserRequired, wireBytes: pg.WireBytes,
			msg: pg.escalate + ", which only the browser passes, and " + why + "; send allow_browser: true, or use POST /v1/render"}
	}
	rt.provider, rt.reason = providerBrowser, "escalated to the browser: "+pg.escalate
	return a.renderRouted(ctx, req, rt, pg)
}

// renderRouted draws req's page in the browser within rt's browser time.
// direct is the direct answer it replaces (its request and bytes count
// too), or nil.
func (a *API) renderRouted(ctx context.Context, req *fetchRequest, rt *route, direct *page) (*page, *rendered, time.Duration, *failure) {
	t := a.d.Render
	t.init()
	rreq := *req
	rreq.Timeout = time.Duration(rt.seconds) * time.Second
	rctx, cancel := context.WithTimeout(ctx, rreq.Timeout)
	defer cancel()
	started := time.Now()
	rd, f := a.render(rctx, t, a.renderClient(), &rreq)
	var used time.Duration
	switch {
	case f == nil && !rd.FromSnapshot:
		used = rd.browser
	case f != nil && !f.notSent:
		used = time.Since(started)
	}
	if direct != nil {
		if f != nil {
			f.notSent, f.wireBytes = false, f.wireBytes+direct.WireBytes
		} else {
			rd.WireBytes += direct.WireBytes
			rd.Attempts += direct.Attempts
		}
	}
	if f != nil {
		return nil, nil, used, f
	}
	return rd.page, rd, used, nil
}

// reserve holds est (one request, the response byte limit, for a render
// its browser seconds) against the calling key's budgets before anything
// is sent; over a budget it answers 402 BUDGET_EXCEEDED and reports
// false. A console session, or no Deps.Budget, is not metered (nil, true).
func (a *API) reserve(w http.ResponseWriter, r *http.Request, est budget.Cost) (*budget.Reservation, bool) {
	p, ok := auth.FromContext(r.Context())
	if a.d.Budget == nil || !ok || p.APIKeyID == 0 {
		return nil, true
	}
	res, err := a.d.Budget.Reserve(r.Context(), p.APIKeyID, est)
	if budget.WriteError(w, err) {
		a.d.Logger.Info("acquire request over budget", "path", r.URL.Path, "api_key", p.APIKeyID, "error", err)
		return nil, false
	}
	if err != nil {
		a.fail(w, r, asFailure(err))
		return nil, false
	}
	return res, true
}

// settle charges a metered request what it cost: one request, the bytes
// downloaded (none for an answer from a snapshot) and the browser seconds
// a render used, or nothing when it was refused before anything was sent.
func (a *API) settle(r *http.Request, res *budget.Reservation, pg *page, f *failure, browserSeconds int64) {
	if res == nil {
		return
	}
	var err error
	switch {
	case f != nil && f.notSent:
		err = res.Cancel(r.Context())
	case f != nil:
		err = res.Settle(r.Context(), budget.Cost{Requests: 1, Bytes: f.wireBytes, BrowserSeconds: browserSeconds})
	default:
		err = res.Settle(r.Context(), budget.Cost{Requests: 1, Bytes: pg.WireBytes, BrowserSeconds: browserSeconds})
	}
	if err != nil {
		// The reservation expires by itself (budget.HoldFor); the answer
		// is not withheld for the meter's sake.
		a.d.Logger.Error("acquire: settle budget", "path", r.URL.Path, "error", err)
	}
}

// acquire answers from a young enough snapshot, or asks the site through
// the polite client's direct tier and keeps the answer. A direct answer
// that is the site's cookie challenge, or (with shells) one that looks
// like a shell its script fills in, is not kept: it comes back with
// page.escalate saying why the browser should draw the page.
func (a *API) acquire(ctx context.Context, req *fetchRequest, shells bool) (*page, *failure) {
	// A URL the guard refuses is refused whether or not a snapshot could
	// answer: the answer to a request never depends on what was cached.
	freq := fetch.Request{URL: req.URL, Purpose: model.PurposeProbe, Accept: acceptHeader, MaxBytes: req.MaxBytes,
		Tier: fetch.TierDirect}
	if err := a.d.Client.CheckTarget(ctx, freq); err != nil {
		return nil, fetchFailure(ctx, req, err, a.d.Now())
	}
	if req.MaxAge > 0 {
		snap, body, err := a.d.Store.FetchSnapshot(ctx, req.URL)
		switch {
		case err == nil && a.d.Now().Sub(snap.FetchedAt) < req.MaxAge && snap.RawBytes <= req.MaxBytes:
			return &page{SourceURL: req.URL, FinalURL: snap.FinalURL, Status: snap.Status, ContentType: snap.ContentType,
				Body: body, RawRef: snap.RawPath, RawSHA256: snap.RawSHA256, FetchedAt: snap.FetchedAt,
				FromSnapshot: true, WireBytes: 0, Duration: 0, Tier: snap.Tier}, nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			// Not fatal: the site is asked instead, politely as always.
			a.d.Logger.Warn("acquire fetch: read snapshot", "url", req.URL, "error", err)
		}
	}
	resp, err := a.d.Client.Do(ctx, freq)
	if err != nil {
		return nil, fetchFailure(ctx, req, err, a.d.Now())
	}
	if resp.Challenged {
		return &page{SourceURL: req.URL, FinalURL: resp.URL, Status: resp.Status, WireBytes: resp.WireBytes, Attempts: 1,
			escalate: fmt.Sprintf("the direct answer (HTTP %d) was the site's cookie challenge", resp.Status)}, nil
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &failure{status: http.StatusBadGateway, code: CodeSiteError,
			msg:     fmt.Sprintf("the site answered HTTP %d for %s", resp.Status, resp.URL),
			details: map[string]any{"statusCode": resp.Status, "url": resp.URL}, wireBytes: resp.WireBytes}
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Body)
	}
	if kindOfContent(ct) == "" {
		mt, _, _ := mime.ParseMediaType(ct)
		return nil, &failure{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedContent,
			msg:     fmt.Sprintf("the page is %s, not HTML or text; /v1/fetch turns web pages into Markdown (PDFs have endpoints of their own)", mt),
			details: map[string]any{"contentType": ct}, wireBytes: resp.WireBytes}
	}
	pg := &page{SourceURL: req.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct, Body: resp.Body,
		FetchedAt: a.d.Now().UTC(), WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, Attempts: 1}
	if shells {
		if pg.escalate = looksLikeShell(resp.Body, ct); pg.escalate != "" {
			return pg, nil
		}
	}
	snap := &store.FetchSnapshot{URL: req.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct,
		WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, FetchedAt: pg.FetchedAt}
	if err := a.d.Store.SaveFetchSnapshot(ctx, snap, resp.Body); err != nil {
		a.d.Logger.Error("acquire fetch: keep raw body", "url", req.URL, "error", err)
		return nil, &failure{status: http.StatusInternalServerError, code: CodeInternal,
			msg: "the page was fetched but could not be stored; try again later", wireBytes: resp.WireBytes}
	}
	pg.RawRef, pg.RawSHA256 = snap.RawPath, snap.RawSHA256
	return pg, nil
}

// kindOfContent is "html" or "text" for what the API reads, "" otherwise.
func kindOfContent(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "html"
	case "text/plain":
		return "text"
	}
	return ""
}

// fetchFailure turns the polite client's refusals and failures into
// answers. Refusals made before anything was sent say so; the host's own
// state (robots.txt unreadable, breaker open) says when to come back.
func fetchFailure(ctx context.Context, req *fetchRequest, err error, now time.Time) *failure {
	var refused *fetch.RefusedError
	var robots *fetch.RobotsError
	var blocked *fetch.BlockedError
	var tooLarge *fetch.ErrTooLarge
	switch {
	case errors.As(err, &refused):
		return &failure{status: http.StatusForbidden, code: CodeURLRefused,
			msg: refused.Error() + "; zhizhi fetches public web pages only", notSent: true}
	case errors.As(err, &robots) && robots.Unreachable:
		f := &failure{status: http.StatusServiceUnavailable, code: CodeRobotsUnavailable,
			msg: robots.Error() + "; nothing is fetched from the host until its robots.txt can be read", notSent: true}
		if !robots.RetryAt.IsZero() {
			f.retryAfter = max(robots.RetryAt.Sub(now), time.Second)
		}
		return f
	case errors.As(err, &robots):
		f := &failure{status: http.StatusForbidden, code: CodeRobotsDisallowed, msg: robots.Error() + "; zhizhi always obeys robots.txt", notSent: true}
		if robots.Rule != "" {
			f.details = map[string]any{"rule": robots.Rule, "line": robots.Line}
		}
		return f
	case errors.As(err, &blocked):
		f := &failure{status: http.StatusServiceUnavailable, code: CodeHostBlocked, msg: blocked.Error(), notSent: true}
		f.retryAfter = max(blocked.Until.Sub(now), time.Second)
		return f
	case errors.Is(err, fetch.ErrCaptcha):
		return &failure{status: http.StatusServiceUnavailable, code: CodeHostBlocked, msg: fetch.ErrCaptcha.Error(),
			retryAfter: time.Hour}
	case errors.As(err, &tooLarge):
		limit := fmt.Sprintf("%d bytes (max_bytes)", req.MaxBytes)
		if tooLarge.Limit < req.MaxBytes {
			limit = fmt.Sprintf("%d bytes (the server's download limit)", tooLarge.Limit)
		}
		return &failure{status: http.StatusBadGateway, code: CodeTooLarge,
			msg: "the body is larger than " + limit + "; nothing was kept", wireBytes: min(req.MaxBytes, tooLarge.Limit)}
	case errors.Is(err, fetch.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &failure{status: http.StatusRequestTimeout, code: CodeTimeout,
			msg: fmt.Sprintf("no answer within %v (timeout %d ms; the host's politeness wait counts too)", req.Timeout, req.Timeout.Milliseconds())}
	case errors.Is(err, fetch.ErrTooManyRedirects):
		return &failure{status: http.StatusBadGateway, code: CodeSiteError, msg: err.Error()}
	}
	return &failure{status: http.StatusBadGateway, code: CodeSiteError, msg: "fetching the page failed: " + err.Error()}
}

// asFailure keeps a *failure, and makes anything else an internal error.
func asFailure(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return &failure{status: http.StatusInternalServerError, code: CodeInternal, msg: "internal error: " + err.Error()}
}
