package acquire

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/charset"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// The provider router of POST /v1/fetch: the caller states its intent
// (allow_browser, allow_async, max_cost) and the server chooses the
// direct client or the browser from the site's policy, the host's
// history, its breaker and the caller's browser seconds left.
const (
	// historyWindow is how far back the host's history counts.
	historyWindow = 30 * 24 * time.Hour
	// minBrowserSeconds is the least time worth starting a render with.
	minBrowserSeconds = 5
	// shellTextRunes: an HTML answer with less visible text than this and
	// a script is taken for a shell its script fills in.
	shellTextRunes = 100

	// CodeBrowserRequired: the page needs the browser and the request's
	// intent (allow_browser, max_cost) does not allow it.
	CodeBrowserRequired = "BROWSER_REQUIRED"
)

// crawlerPurposes are the crawl_log purposes of the crawler's own pages:
// a browser row with one of them is a page the crawler needed it for.
var crawlerPurposes = []string{model.PurposeIndex, model.PurposeList, model.PurposeDetail}

// route is the router's decision for one request.
type route struct {
	provider string // providerDirect or providerBrowser
	reason   string
	// seconds is the browser time the request may use (held before it
	// runs); 0 when the browser may not run.
	seconds int64
	// escalate: a direct answer that turns out to be a challenge or a
	// script's shell is drawn again in the browser.
	escalate bool
	// whyNot says why the browser may not run, when it may not.
	whyNot string
}

// decide chooses the provider of req before anything is sent. It answers
// a failure when the site needs the browser and the intent or the budget
// does not allow it, or when the host's breaker is open.
func (a *API) decide(ctx context.Context, r *http.Request, req *fetchRequest) (*route, *failure) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Hostname() == "" {
		// The SSRF guard refuses it in its own words.
		return &route{provider: providerDirect, reason: "no host to judge: the URL goes to the guard as it is"}, nil
	}
	host := strings.ToLower(u.Hostname())
	now := a.d.Now()
	if hs, err := a.d.Store.GetHostState(ctx, host); err == nil && hs.BreakerUntil != nil && hs.BreakerUntil.After(now) {
		return nil, &failure{status: http.StatusServiceUnavailable, code: CodeHostBlocked, notSent: true,
			retryAfter: max(hs.BreakerUntil.Sub(now), time.Second),
			msg: fmt.Sprintf("no provider runs: the breaker of %s is open until %s after repeated errors; neither the direct client nor the browser asks it before then",
				host, hs.BreakerUntil.UTC().Format(time.RFC3339))}
	}

	// Why the browser would be needed, from the site's policy and the
	// host's history; cookies a browser visit earned let the direct
	// client through, as the crawler reuses them.
	pol := a.d.Client.SitePolicy(host)
	hist, err := a.d.Store.HostHistory(ctx, store.HostHistoryQuery{Host: host, Since: now.Add(-historyWindow),
		ChallengeClass: fetch.ClassChallenge, BrowserStrategy: fetch.TierBrowser, Purposes: crawlerPurposes})
	if err != nil {
		return nil, asFailure(err)
	}
	cookies, err := a.d.Store.ValidCookies(ctx, host, now)
	if err != nil {
		return nil, asFailure(err)
	}
	var need string
	policy := pol.Strategy == fetch.TierBrowser
	switch {
	case policy:
		need = "the site's configuration fetches it with the browser"
	case hist.LastChallenge != nil:
		need = fmt.Sprintf("the host answered a cookie challenge on %s", hist.LastChallenge.UTC().Format(time.DateOnly))
	case hist.BrowserPages > 0:
		need = fmt.Sprintf("the crawler drew %d pages of this host with the browser in the last 30 days", hist.BrowserPages)
	}
	if need != "" && len(cookies) > 0 {
		return &route{provider: providerDirect,
			reason: need + ", and the cookies a browser visit earned there are still valid: the direct client sends them"}, nil
	}

	rt := &route{}
	rt.seconds, rt.whyNot = a.browserSeconds(ctx, r, req)
	switch {
	case need != "" && rt.seconds > 0:
		rt.provider, rt.reason = providerBrowser, need
	case need != "" && policy:
		return nil, a.browserRefused(need, rt.whyNot)
	case need != "":
		rt.provider, rt.reason = providerDirect, need+", but "+rt.whyNot+": the direct client tries"
	default:
		rt.provider, rt.escalate = providerDirect, rt.seconds > 0
		rt.reason = "nothing says this host needs a browser (its configuration fetches directly; no challenge or browser pages in 30 days)"
	}
	return rt, nil
}

// browserSeconds is how long a render of req may take: the request's
// timeout, the tier's limit, max_cost.browser_seconds and the key's browser
// seconds left, the smallest; 0 and why, when it may not run at all.
func (a *API) browserSeconds(ctx context.Context, r *http.Request, req *fetchRequest) (int64, string) {
	switch {
	case !req.AllowBrowser:
		return 0, "the request does not allow the browser (allow_browser)"
	case a.d.Render == nil || !a.renderClient().HasBrowser():
		return 0, "this server has no browser"
	}
	a.d.Render.init()
	secs := wholeSeconds(min(req.Timeout, a.d.Render.limit))
	if req.MaxBrowserSeconds != nil {
		if *req.MaxBrowserSeconds < minBrowserSeconds {
			return 0, fmt.Sprintf("max_cost.browser_seconds (%d) is less than a render needs (%d)", *req.MaxBrowserSeconds, minBrowserSeconds)
		}
		secs = min(secs, *req.MaxBrowserSeconds)
	}
	if p, ok := auth.FromContext(r.Context()); ok && p.APIKeyID != 0 && a.d.Budget != nil {
		if u, ok := a.d.Budget.(usageReader); ok {
			use, err := u.Usage(ctx, p.APIKeyID)
			if err == nil {
				if left := use.BrowserSeconds.Remaining; left < minBrowserSeconds {
					return 0, fmt.Sprintf("the key has %d browser seconds left today", left)
				}
				secs = min(secs, use.BrowserSeconds.Remaining)
			}
		}
	}
	if secs < minBrowserSeconds {
		return 0, fmt.Sprintf("the request's time (%d s) is less than a render needs (%d s)", secs, minBrowserSeconds)
	}
	return secs, ""
}

// browserRefused is the answer when the site's configuration needs the
// browser and it may not run.
func (a *API) browserRefused(need, whyNot string) *failure {
	switch {
	case strings.Contains(whyNot, "no browser"):
		return browserUnavailable(need + ", and this server has no browser")
	case strings.Contains(whyNot, "browser seconds left"):
		return &failure{status: http.StatusPaymentRequired, code: CodeBudgetExceeded, notSent: true,
			msg: need + ", and " + whyNot + " (daily budget of browser seconds); it renews at midnight UTC+8, or ask an operator to raise it (zhizhi apikey budget)"}
	}
	return &failure{status: http.StatusUnprocessableEntity, code: CodeBrowserRequired, notSent: true,
		msg: need + ", and " + whyNot + "; send allow_browser: true (with max_cost.browser_seconds of at least 5, if you give one), or use POST /v1/render"}
}

// usageReader is *budget.Service's Usage, for the browser seconds left.
type usageReader interface {
	Usage(ctx context.Context, keyID int64) (budget.Usage, error)
}

func (a *API) renderClient() *fetch.Client {
	if a.d.Render != nil && a.d.Render.Client != nil {
		return a.d.Render.Client
	}
	return a.d.Client
}

// looksLikeShell says why an HTML body looks like a shell its script
// fills in (little visible text, and a script), or "".
func looksLikeShell(body []byte, contentType string) string {
	if kindOfContent(contentType) != "html" {
		return ""
	}
	html, _, err := charset.DecodeHTML(body, contentType)
	if err != nil {
		return ""
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return ""
	}
	scripts := doc.Find("script").Length()
	if scripts == 0 {
		return ""
	}
	doc.Find("script, style, noscript, template").Remove()
	text := strings.Join(strings.Fields(doc.Find("body").Text()), "")
	if n := utf8.RuneCountInString(text); n < shellTextRunes {
		return fmt.Sprintf("the direct answer has %d characters of text and %d scripts: a shell its script fills in", n, scripts)
	}
	return ""
}
