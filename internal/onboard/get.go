package onboard

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"time"

	"zhizhi/internal/fetch"
)

// get fetches u politely. A host no configuration names has no adapter
// resilience rules yet, so the client cannot tell a CMS's cookie challenge
// from a plain error; when the answer looks like one any adapter knows,
// the host is given those rules and asked once more, through the browser
// tier when the client has one.
func (w *Wizard) get(ctx context.Context, rawURL, purpose string) (*fetch.Response, error) {
	req := fetch.Request{URL: rawURL, Purpose: purpose}
	resp, err := w.Fetch.Do(ctx, req)
	if err != nil || w.configuredAs(rawURL) != "" {
		return resp, err
	}
	p, challenged := w.provisional(resp)
	if !challenged {
		return resp, nil
	}
	u, perr := url.Parse(rawURL)
	if perr != nil {
		return resp, nil
	}
	w.Fetch.SetSitePolicy(u.Hostname(), p)
	return w.Fetch.Do(ctx, req)
}

// provisional returns the policy of an unconfigured host carrying every
// adapter's escalation rules, and whether resp is a challenge by them.
func (w *Wizard) provisional(resp *fetch.Response) (fetch.SitePolicy, bool) {
	p := fetch.DefaultSitePolicy()
	challenged := false
	for _, a := range w.adapters() {
		r := a.Resilience
		p.EscalateStatus = append(p.EscalateStatus, r.EscalateStatus...)
		p.EscalateSignatures = append(p.EscalateSignatures, r.EscalateBodySignatures...)
		if ttl := time.Duration(r.CookieTTLSeconds) * time.Second; ttl > 0 && (p.CookieTTL == 0 || ttl < p.CookieTTL) {
			p.CookieTTL = ttl
		}
		if resp.Tier == fetch.TierBrowser {
			continue
		}
		if slices.Contains(r.EscalateStatus, resp.Status) {
			challenged = true
		}
		for _, sig := range r.EscalateBodySignatures {
			if bytes.Contains(resp.Body, []byte(sig)) {
				challenged = true
			}
		}
	}
	return p, challenged
}
