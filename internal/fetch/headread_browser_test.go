package fetch

import (
	"context"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// TestHeadReadThroughTheBrowser: a summary-access site behind a cookie
// challenge (here the city portal, taken as one) is read through the
// browser tier, which loads a page whole; its head read keeps no more than
// the head a direct read would have, and, as on every site, the page's
// style sheet is never asked for.
func TestHeadReadThroughTheBrowser(t *testing.T) {
	needChromium(t)
	const head = 500 // a detail page is several kilobytes
	e := newSimEnv(t, 1, ClientOptions{Browser: Chromium("", quietLogger())})
	e.advancing(t, false)
	site := model.Site{BaseURL: "http://" + qingyuan, RespectRobots: true, Access: model.AccessSummary,
		DefaultFetchStrategy: model.StrategyDirect}
	e.c.SetSitePolicy(qingyuan, PolicyFor(site, Resilience{EscalateStatus: []int{412},
		EscalateSignatures: []string{sim.ChallengeMarker}, CookieTTL: 20 * time.Minute}))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	page := truthURL(t, e.w, qingyuan, "/qyfgw/")
	r, err := e.c.Do(ctx, Request{URL: page, Purpose: model.PurposeDetail, Head: true, MaxBytes: head})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tier != TierBrowser || !r.Truncated || len(r.Body) > head || len(r.Body) < head-3 {
		t.Errorf("head read through the browser: tier %s, truncated %v, %d bytes; want the page cut to its %d-byte head",
			r.Tier, r.Truncated, len(r.Body), head)
	}
	if _, err := e.c.Do(ctx, Request{URL: "http://" + qingyuan + "/qyfgw/gkmlpt/index", Purpose: model.PurposeIndex, Tier: TierBrowser}); err != nil {
		t.Fatal(err)
	}
	for _, a := range e.w.AccessLog(qingyuan) {
		if strings.HasSuffix(a.Path, ".css") || strings.Contains(a.Path, "/images/") {
			t.Errorf("the site was asked for %s", a.Path)
		}
	}
}
