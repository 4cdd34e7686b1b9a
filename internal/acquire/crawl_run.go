package acquire

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Codes of a crawl job's pages and failures.
const (
	CodeInterrupted = "INTERRUPTED"
	CodeRedirect    = "REDIRECT"
)

// interrupted is the error of a page whose request left while its answer
// was lost with the process that sent it.
const interrupted = "the process working this job stopped while the page was being fetched; it is not asked for again, so that no page is fetched twice, and another page is asked for in its place"

// maxSitemapURLs bounds what one sitemap adds to a job's frontier.
const maxSitemapURLs = 10000

// RunCrawlJob works crawl job id until it ends (finished true: completed,
// failed, cancelled, or gone) or stop is closed or ctx ends (false: the
// job goes on from its frontier at its next run, here or in another
// process). An error leaves the job to be run again.
//
// Pages are asked for one at a time, each through the polite client as
// POST /v1/fetch asks: the SSRF guard, robots.txt, the breaker, the
// host's bucket and one request in flight per host, the byte and time
// limits, crawl_log. Each is recorded as asked before its request leaves,
// so that whatever happens to this process no page is asked twice and the
// job never answers with more than its limit of pages. A page whose answer
// was lost with a killed process does not count against the limit: the
// job asks for another in its place, so it still ends with its limit of
// pages (its site then sees one request more for each such page).
func (a *API) RunCrawlJob(ctx context.Context, id string, stop <-chan struct{}) (finished bool, err error) {
	st := a.d.Store
	attempt, lost, err := st.BeginCrawlJobAttempt(ctx, id, interrupted)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil || attempt == 0 {
		return err == nil, err
	}
	if lost > 0 {
		a.d.Logger.Warn("acquire crawl job: pages lost with a stopped process", "job", id, "pages", lost)
	}
	job, err := st.CrawlJob(ctx, id)
	if err != nil {
		return false, err
	}
	var o crawlOptions
	if err := json.Unmarshal([]byte(job.Options), &o); err != nil {
		return true, a.endJob(ctx, job, attempt, nil, store.CrawlFailed, CodeInternal, "the job's options cannot be read: "+err.Error())
	}
	var scrape map[string]json.RawMessage
	if len(o.ScrapeOptions) > 0 {
		_ = json.Unmarshal(o.ScrapeOptions, &scrape)
	}
	freq, err := a.checkFetch(scrape, false)
	if err != nil {
		return true, a.endJob(ctx, job, attempt, o.Webhook, store.CrawlFailed, CodeInternal, "the job's scrapeOptions: "+err.Error())
	}
	sc, err := newScope(&o)
	if err != nil {
		return true, a.endJob(ctx, job, attempt, o.Webhook, store.CrawlFailed, CodeInternal, "the job's url: "+err.Error())
	}
	if !job.Started {
		a.hook(ctx, job, o.Webhook, EventStarted, nil, "")
		var links []store.CrawlLink
		var credits int64
		if o.Sitemap != SitemapSkip {
			links, credits, err = a.sitemap(ctx, job, sc)
			if errors.As(err, new(*budget.OverError)) {
				return true, a.endJob(ctx, job, attempt, o.Webhook, store.CrawlFailed, CodeBudgetExceeded, err.Error())
			}
			if err != nil && ctx.Err() != nil {
				return false, nil
			}
		}
		if err := st.MarkCrawlJobStarted(ctx, id, attempt, links, credits); err != nil {
			return a.gone(err)
		}
	}
	for {
		select {
		case <-stop:
			return false, nil
		default:
		}
		if ctx.Err() != nil {
			return false, nil
		}
		job, pg, err := st.ClaimCrawlPage(ctx, id, attempt)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return true, a.endJob(ctx, job, attempt, o.Webhook, store.CrawlCompleted, "", "")
		case err != nil:
			return a.gone(err)
		}
		if job.Asked >= job.Limit {
			if err := st.FinishCrawlPage(ctx, id, attempt, pg.URL, store.CrawlPageOutcome{State: store.PageQueued}); err != nil {
				return a.gone(err)
			}
			return true, a.endJob(ctx, job, attempt, o.Webhook, store.CrawlCompleted, "", "")
		}
		out, doc, over := a.crawlPage(ctx, job, attempt, pg, freq, sc, &o)
		dbCtx := context.WithoutCancel(ctx)
		if err := st.FinishCrawlPage(dbCtx, id, attempt, pg.URL, out); err != nil {
			return a.gone(err)
		}
		switch {
		case over != nil:
			return true, a.endJob(dbCtx, job, attempt, o.Webhook, store.CrawlFailed, CodeBudgetExceeded,
				"the job stopped: its API key's "+over.Error())
		case out.State == store.PageQueued:
			return false, nil // stopped before the page was sent
		case doc != nil:
			a.hook(ctx, job, o.Webhook, EventPage, []json.RawMessage{doc}, "")
		}
	}
}

// gone ends a run whose job was taken from it: cancelled by its owner,
// or worked by a later attempt. Anything else is an error (the run is
// tried again).
func (a *API) gone(err error) (bool, error) {
	if errors.Is(err, store.ErrCrawlJobGone) || errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// endJob records the job's end and posts its webhook.
func (a *API) endJob(ctx context.Context, job *store.CrawlJob, attempt int, h *webhook, state, code, msg string) error {
	err := a.d.Store.FinishCrawlJob(context.WithoutCancel(ctx), job.ID, attempt, state, code, msg)
	if errors.Is(err, store.ErrCrawlJobGone) {
		return nil
	}
	if err != nil {
		return err
	}
	a.d.Logger.Info("acquire crawl job ended", "job", job.ID, "state", state, "code", code, "error", msg)
	switch state {
	case store.CrawlCompleted:
		a.hook(ctx, job, h, EventCompleted, nil, "")
	case store.CrawlFailed:
		a.hook(ctx, job, h, EventFailed, nil, msg)
	}
	return nil
}

// reserveFor reserves est against the job's key, if it has one and the
// API meters keys.
func (a *API) reserveFor(ctx context.Context, job *store.CrawlJob, est budget.Cost) (*budget.Reservation, error) {
	if a.d.Budget == nil || job.APIKeyID == nil {
		return nil, nil
	}
	return a.d.Budget.Reserve(ctx, *job.APIKeyID, est)
}

// crawlPage asks for one page of the job and says what became of it: its
// document and the links in scope it holds, or why it failed. over is
// set, and nothing is sent, when the job's key has no budget left.
func (a *API) crawlPage(ctx context.Context, job *store.CrawlJob, attempt int, pg *store.CrawlPage, tmpl *fetchRequest,
	sc *scope, o *crawlOptions) (out store.CrawlPageOutcome, doc json.RawMessage, over *budget.OverError) {
	req := *tmpl
	req.URL = pg.URL
	res, err := a.reserveFor(ctx, job, budget.Cost{Requests: 1, Bytes: req.MaxBytes})
	if errors.As(err, &over) {
		return store.CrawlPageOutcome{State: store.PageQueued}, nil, over
	}
	if err != nil {
		return store.CrawlPageOutcome{State: store.PageQueued}, nil, nil
	}
	sent := false
	freq := fetch.Request{URL: pg.URL, Purpose: model.PurposeProbe, Accept: acceptHeader, MaxBytes: req.MaxBytes,
		Tier: fetch.TierDirect, NoRedirects: true,
		BeforeSend: func(ctx context.Context) error {
			if err := a.d.Store.MarkCrawlPageSent(context.WithoutCancel(ctx), job.ID, attempt, pg.URL); err != nil {
				return err
			}
			sent = true
			return nil
		}}
	settle := func(wire int64) int64 {
		if res == nil {
			return 0
		}
		dbCtx := context.WithoutCancel(ctx)
		var err error
		if !sent {
			err = res.Cancel(dbCtx)
		} else {
			err = res.Settle(dbCtx, budget.Cost{Requests: 1, Bytes: wire})
		}
		if err != nil {
			a.d.Logger.Error("acquire crawl: settle budget", "job", job.ID, "error", err)
		}
		if sent {
			return 1
		}
		return 0
	}
	if err := a.d.Client.CheckTarget(ctx, freq); err != nil {
		f := fetchFailure(ctx, &req, err, a.d.Now())
		settle(0)
		return store.CrawlPageOutcome{State: store.PageRefused, Code: f.code, Error: f.msg}, nil, nil
	}
	fctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	resp, err := a.d.Client.Do(fctx, freq)
	if err != nil {
		credits := settle(0)
		if !sent {
			var robots *fetch.RobotsError
			switch {
			case ctx.Err() != nil:
				return store.CrawlPageOutcome{State: store.PageQueued}, nil, nil // our own stop: asked again later
			case errors.As(err, &robots) && !robots.Unreachable:
				f := fetchFailure(ctx, &req, err, a.d.Now())
				return store.CrawlPageOutcome{State: store.PageRobots, Code: f.code, Error: f.msg}, nil, nil
			case errors.Is(err, store.ErrCrawlJobGone):
				return store.CrawlPageOutcome{State: store.PageQueued}, nil, nil
			}
			f := fetchFailure(fctx, &req, err, a.d.Now())
			return store.CrawlPageOutcome{State: store.PageRefused, Code: f.code, Error: f.msg}, nil, nil
		}
		f := fetchFailure(fctx, &req, err, a.d.Now())
		return store.CrawlPageOutcome{State: store.PageFailed, Code: f.code, Error: f.msg, Credits: credits}, nil, nil
	}
	credits := settle(resp.WireBytes)
	fail := func(code string, status int, msg string) (store.CrawlPageOutcome, json.RawMessage, *budget.OverError) {
		return store.CrawlPageOutcome{State: store.PageFailed, Status: status, Code: code, Error: msg, Credits: credits}, nil, nil
	}
	if resp.Status >= 300 && resp.Status < 400 && resp.Header.Get("Location") != "" {
		// A redirect is followed only within the job's scope: its target
		// is queued as a link of the page, at the page's own depth.
		u, _ := url.Parse(pg.URL)
		to, err := u.Parse(resp.Header.Get("Location"))
		if err != nil {
			return fail(CodeRedirect, resp.Status, "a redirect to an unreadable location")
		}
		out := store.CrawlPageOutcome{State: store.PageRedirect, Status: resp.Status, Code: CodeRedirect, Credits: credits,
			Error: "redirected to " + to.Redacted() + " (outside the job's scope: not followed)"}
		if n, ok := sc.admit(to.String(), pg.Depth); ok && (o.Sitemap != SitemapOnly || pg.Depth == 0) {
			out.Error = "redirected to " + n + " (queued)"
			out.Links = []store.CrawlLink{{URL: n, Depth: pg.Depth}}
		}
		return out, nil, nil
	}
	if resp.Status < 200 || resp.Status > 299 {
		return fail(CodeSiteError, resp.Status, fmt.Sprintf("the site answered HTTP %d", resp.Status))
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Body)
	}
	if kindOfContent(ct) == "" {
		return fail(CodeUnsupportedContent, resp.Status, "the page is "+ct+", not HTML or text")
	}
	p := &page{SourceURL: pg.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct, Body: resp.Body,
		FetchedAt: a.d.Now().UTC(), WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, Attempts: 1}
	snap := &store.FetchSnapshot{URL: pg.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct,
		WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, FetchedAt: p.FetchedAt}
	if err := a.d.Store.SaveFetchSnapshot(context.WithoutCancel(ctx), snap, resp.Body); err != nil {
		return fail(CodeInternal, resp.Status, "the page was fetched but could not be stored")
	}
	p.RawRef, p.RawSHA256 = snap.RawPath, snap.RawSHA256
	d, err := build(&req, p, a.d.Now())
	if err != nil {
		return fail(CodeInternal, resp.Status, "the page could not be read: "+err.Error())
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return fail(CodeInternal, resp.Status, err.Error())
	}
	out = store.CrawlPageOutcome{State: store.PageDone, Status: resp.Status, Document: string(raw), Credits: credits}
	if o.Sitemap != SitemapOnly {
		seen := map[string]bool{}
		for _, l := range d.found {
			if n, ok := sc.admit(l, pg.Depth+1); ok && !seen[n] {
				seen[n] = true
				out.Links = append(out.Links, store.CrawlLink{URL: n, Depth: pg.Depth + 1})
			}
		}
	}
	return out, raw, nil
}

// sitemap reads the start host's /sitemap.xml (and the sitemaps an index
// names, on the job's hosts) through the polite client, charged to the
// job's key, and returns the URLs in scope at depth 0. A site with no
// sitemap adds nothing.
func (a *API) sitemap(ctx context.Context, job *store.CrawlJob, sc *scope) (links []store.CrawlLink, credits int64, err error) {
	u, err := url.Parse(job.URL)
	if err != nil {
		return nil, 0, err
	}
	todo := []string{(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/sitemap.xml"}).String()}
	for i := 0; i < len(todo) && i < 10; i++ {
		body, sent, err := a.sitemapFile(ctx, job, todo[i])
		if sent {
			credits++
		}
		if err != nil {
			var over *budget.OverError
			if errors.As(err, &over) || ctx.Err() != nil {
				return nil, credits, err
			}
			a.d.Logger.Info("acquire crawl: no sitemap", "job", job.ID, "url", todo[i], "error", err)
			continue
		}
		var doc struct {
			URLs     []string `xml:"url>loc"`
			Sitemaps []string `xml:"sitemap>loc"`
		}
		if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&doc); err != nil {
			continue
		}
		for _, s := range doc.Sitemaps {
			if su, err := url.Parse(strings.TrimSpace(s)); err == nil && sc.hostIn(su) {
				todo = append(todo, su.String())
			}
		}
		for _, l := range doc.URLs {
			if n, ok := sc.admit(strings.TrimSpace(l), 0); ok && len(links) < maxSitemapURLs {
				links = append(links, store.CrawlLink{URL: n, Depth: 0})
			}
		}
	}
	return links, credits, nil
}

// sitemapFile fetches one sitemap, charged as a request to the job's key.
func (a *API) sitemapFile(ctx context.Context, job *store.CrawlJob, loc string) (body []byte, sent bool, err error) {
	res, err := a.reserveFor(ctx, job, budget.Cost{Requests: 1, Bytes: a.d.MaxBytes})
	if err != nil {
		return nil, false, err
	}
	req := fetch.Request{URL: loc, Purpose: model.PurposeIndex, Accept: "application/xml,text/xml;q=0.9,*/*;q=0.1",
		MaxBytes: a.d.MaxBytes, Tier: fetch.TierDirect, NoRedirects: true,
		BeforeSend: func(context.Context) error { sent = true; return nil }}
	if err = a.d.Client.CheckTarget(ctx, req); err == nil {
		fctx, cancel := context.WithTimeout(ctx, a.d.DefaultTimeout)
		defer cancel()
		var resp *fetch.Response
		resp, err = a.d.Client.Do(fctx, req)
		if res != nil {
			dbCtx := context.WithoutCancel(ctx)
			if sent && resp != nil {
				_ = res.Settle(dbCtx, budget.Cost{Requests: 1, Bytes: resp.WireBytes})
			} else if sent {
				_ = res.Settle(dbCtx, budget.Cost{Requests: 1})
			} else {
				_ = res.Cancel(dbCtx)
			}
			res = nil
		}
		if err == nil && resp.Status != http.StatusOK {
			err = fmt.Errorf("HTTP %d", resp.Status)
		}
		if err == nil {
			return resp.Body, sent, nil
		}
	}
	if res != nil {
		_ = res.Cancel(context.WithoutCancel(ctx))
	}
	return nil, sent, err
}
