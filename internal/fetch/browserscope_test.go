package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
)

func TestSameSite(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		want       bool
	}{
		{"same host", "www.qingyuan.gov.cn", "www.qingyuan.gov.cn", true},
		{"www twin under gov.cn", "www.qingyuan.gov.cn", "qingyuan.gov.cn", true},
		{"department of the same city", "www.qingyuan.gov.cn", "fgw.qingyuan.gov.cn", true},
		{"another city under gov.cn", "www.qingyuan.gov.cn", "www.gd.gov.cn", false},
		{"gov.cn itself is a public suffix", "www.gov.cn", "gov.cn", false},
		{"case and trailing dot", "WWW.Qingyuan.gov.cn.", "qingyuan.gov.cn", true},
		{"unlisted suffix: www twin", "www.portal.gov.test", "portal.gov.test", true},
		{"unlisted suffix: other names are other sites", "www.qingyuan.gov.test", "www.gd.gov.test", false},
		{"unlisted suffix: a subdomain is not the site", "www.portal.gov.test", "cdn.portal.gov.test", false},
		{"address literals", "10.0.0.1", "10.0.0.2", false},
		{"a name and an address", "www.qingyuan.gov.cn", "1.2.3.4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSite(tc.a, tc.b); got != tc.want {
				t.Errorf("sameSite(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

const (
	portal     = "www.portal.gov.test"
	portalTwin = "portal.gov.test"
	thirdParty = "www.gd.gov.test" // a simulated host with an access log
)

// portalPages reference the third party's script, frame and API; their
// own script on the page's own host must still run.
var portalPages = map[string]string{
	"/robots.txt": "User-agent: *\nAllow: /\n",
	"/own.js":     ownJS,
	"/index.html": `<!DOCTYPE html><html><head><meta charset="utf-8"><title>门户</title>
<script src="http://` + thirdParty + `/gkmlpt/static/js/app.js"></script></head>
<body><p id="own">未运行</p>
<iframe src="http://` + thirdParty + `/"></iframe>
<script>fetch("http://` + thirdParty + `/api/list").catch(function () {});</script>
<script src="/own.js"></script>
</body></html>`,
	"/start": "redirect:http://" + portalTwin + "/landing.html",
	"/landing.html": `<!DOCTYPE html><html><head><meta charset="utf-8"><title>落地页</title></head>
<body><p id="own">未运行</p>
<script>fetch("http://` + thirdParty + `/api/list").catch(function () {});</script>
<script src="/own.js"></script>
</body></html>`,
	"/away": "redirect:http://" + thirdParty + "/",
}

// clientWith is e.client with more hosts pinned.
func (e *simEnv) clientWith(t *testing.T, extra ResolveMap, opts ClientOptions) *Client {
	t.Helper()
	opts.Store = e.st
	opts.Clock = e.clock
	opts.Resolve = ResolveMap(e.w.ResolveMap())
	for h, a := range extra {
		opts.Resolve[h] = a
	}
	opts.Version = "test"
	opts.ContactURL = "https://zhizhi.example/contact"
	opts.Logger = quietLogger()
	opts.Dial = loopbackOnly(t)
	opts.LookupIP = func(_ context.Context, host string) ([]net.IP, error) {
		t.Errorf("unexpected DNS lookup for %q", host)
		return nil, fmt.Errorf("no DNS in tests: %s", host)
	}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBrowserTierLoadsOnlyTheSite: a page rendered by the browser tier
// loads from its own host (and, after a redirect of the page itself, from
// the same site's other name) and from nowhere else: the third party's
// access log stays empty — not even its robots.txt is asked for — and each
// refused request is in crawl_log with the reason.
func TestBrowserTierLoadsOnlyTheSite(t *testing.T) {
	needChromium(t)
	launches := &chromiumLaunches{}
	e := newSimEnv(t, 1, ClientOptions{})
	launches.clock = e.clock
	pages := newPageServer(t, portalPages)
	addr := pages.Listener.Addr().String()
	e.c = e.clientWith(t, ResolveMap{portal: addr, portalTwin: addr}, ClientOptions{Browser: launches.starter()})
	e.advancing(t, false)
	for _, h := range []string{portal, portalTwin} {
		e.c.SetSitePolicy(h, SitePolicy{RespectRobots: true, Strategy: TierBrowser})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	offSiteRows := func(t *testing.T, wantAtLeast int) {
		t.Helper()
		rows := crawlLogRows(t, e.st, thirdParty)
		if len(rows) < wantAtLeast {
			t.Errorf("crawl_log has %d rows for %s, want at least %d (each refusal recorded)", len(rows), thirdParty, wantAtLeast)
		}
		for _, r := range rows {
			if r.ErrorClass != ClassBlocked || !strings.Contains(r.ErrorMsg, ErrOffSite.Error()) || r.HTTPStatus != nil {
				t.Errorf("crawl_log row %s: class %q msg %q status %v, want blocked with %q and no status",
					r.ArticleURL, r.ErrorClass, r.ErrorMsg, deref(r.HTTPStatus), ErrOffSite.Error())
			}
		}
	}
	noThirdParty := func(t *testing.T) {
		t.Helper()
		if log := e.w.AccessLog(thirdParty); len(log) != 0 {
			for _, a := range log {
				t.Errorf("%s saw %s %s (UA %q)", thirdParty, a.Method, a.Path, a.UserAgent)
			}
		}
	}

	t.Run("resources of another host refused", func(t *testing.T) {
		resp, err := e.c.Do(ctx, Request{URL: "http://" + portal + "/index.html", Purpose: model.PurposeIndex})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if resp.Tier != TierBrowser || resp.Status != 200 || !strings.Contains(string(resp.Body), "脚本已运行") {
			t.Fatalf("tier %s status %d; own script ran: %v", resp.Tier, resp.Status, strings.Contains(string(resp.Body), "脚本已运行"))
		}
		noThirdParty(t)
		offSiteRows(t, 3) // script, frame, fetch
		if n := e.c.Limiter().InFlight(); n != 0 {
			t.Errorf("%d limiter slots still held after the visit", n)
		}
	})

	t.Run("redirect of the page to the same site's other name", func(t *testing.T) {
		resp, err := e.c.Do(ctx, Request{URL: "http://" + portal + "/start", Purpose: model.PurposeIndex})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if resp.URL != "http://"+portalTwin+"/landing.html" || resp.Status != 200 || !strings.Contains(string(resp.Body), "脚本已运行") {
			t.Fatalf("ended at %s status %d; own script ran: %v", resp.URL, resp.Status, strings.Contains(string(resp.Body), "脚本已运行"))
		}
		seen := strings.Join(pages.seen(), " ")
		for _, want := range []string{portalTwin + "/landing.html", portalTwin + "/own.js", portalTwin + "/robots.txt"} {
			if !strings.Contains(seen, want) {
				t.Errorf("the site never saw %s (saw %s)", want, seen)
			}
		}
		var landing *model.CrawlLog
		rows := crawlLogRows(t, e.st, portalTwin)
		for i, r := range rows {
			if r.ArticleURL == "http://"+portalTwin+"/landing.html" {
				landing = &rows[i]
			}
		}
		if landing == nil || landing.Purpose != model.PurposeIndex || deref(landing.HTTPStatus) != 200 {
			t.Errorf("crawl_log row of the landing page: %+v, want purpose index, status 200", landing)
		}
		noThirdParty(t)
		offSiteRows(t, 4)
		if n := e.c.Limiter().InFlight(); n != 0 {
			t.Errorf("%d limiter slots still held after the visit: the redirect host's hold leaked", n)
		}
	})

	t.Run("redirect of the page to another site refused", func(t *testing.T) {
		_, err := e.c.Do(ctx, Request{URL: "http://" + portal + "/away", Purpose: model.PurposeIndex})
		if err == nil {
			t.Fatal("a page redirected to another site rendered")
		}
		noThirdParty(t)
		offSiteRows(t, 5)
	})

	t.Run("the gate outside a visit", func(t *testing.T) {
		u, _ := url.Parse("http://" + portal + "/index.html")
		if err := e.c.allow(ctx, u); !errors.Is(err, ErrOffSite) {
			t.Errorf("allow without a visit: %v, want ErrOffSite", err)
		}
	})
	launches.closeAndCheckGone(t, e.c)
}
