package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// outsideSite is a site outside the resolve map, as the guard sees one: a
// public address (from the test's resolver) whose connections the test's
// dialer carries to a loopback server. Its /go/… pages redirect to the
// URL in their "to" parameter, and so may its robots.txt.
type outsideSite struct {
	srv         *httptest.Server
	robotsTo    string
	robots      string // robots.txt; allow all when empty
	robotsAsked atomic.Int32

	mu       sync.Mutex
	now      func() time.Time // the test's clock, for arrivals
	arrivals []outsideArrival
}

type outsideArrival struct {
	path string
	at   time.Time
}

func (o *outsideSite) seen() []outsideArrival {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]outsideArrival(nil), o.arrivals...)
}

const outsideHost = "www.outside.gov.test"
const outsideIP = "93.184.216.34"

func newOutsideSite(t *testing.T) *outsideSite {
	o := &outsideSite{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		if o.now != nil {
			o.arrivals = append(o.arrivals, outsideArrival{r.URL.RequestURI(), o.now()})
		}
		o.mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt" && o.robotsTo != "":
			o.robotsAsked.Add(1)
			http.Redirect(w, r, o.robotsTo, http.StatusFound)
		case r.URL.Path == "/robots.txt":
			o.robotsAsked.Add(1)
			if o.robots != "" {
				fmt.Fprint(w, o.robots)
				return
			}
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/go":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		default:
			fmt.Fprint(w, "<html><body>outside</body></html>")
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// client is a client of e's world that also reaches the outside site the
// way the guard allows a public host: by its public address.
func (o *outsideSite) client(t *testing.T, e *simEnv) *Client {
	t.Helper()
	c, err := NewClient(ClientOptions{
		Store: e.st, Clock: e.clock, Resolve: ResolveMap(e.w.ResolveMap()),
		Version: "test", ContactURL: "https://zhizhi.example/contact", Logger: quietLogger(),
		LookupIP: fakeDNS(t, map[string][]string{outsideHost: {outsideIP}}),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == net.JoinHostPort(outsideIP, "80") {
				addr = o.srv.Listener.Addr().String()
			}
			if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
				t.Errorf("guard let a connection to %s through", addr)
				return nil, fmt.Errorf("test dialer: %s is not loopback", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.c = c
	return c
}

// TestRedirectIntoTheResolveMap: a site outside ZHIZHI_RESOLVE may not
// send zhizhi to a host in it (the map is the only way to loopback); the
// mapped host never sees a request. A mapped host may still redirect to
// another mapped host.
func TestRedirectIntoTheResolveMap(t *testing.T) {
	const gd = "www.gd.gov.test"
	inMap := "http://" + gd + "/"
	t.Run("page", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		o := newOutsideSite(t)
		c := o.client(t, e)
		e.advancing(t, true)
		_, err := c.Do(context.Background(), Request{URL: "http://" + outsideHost + "/go?to=" + inMap, Purpose: model.PurposeDetail})
		var rf *RefusedError
		if !errors.As(err, &rf) || !strings.Contains(err.Error(), "only a host in the map may redirect to one") {
			t.Fatalf("redirect from %s to %s: %v, want refused", outsideHost, inMap, err)
		}
		if got := e.w.AccessLog(gd); len(got) != 0 {
			t.Errorf("the mapped host saw %d requests, e.g. %s", len(got), got[0].Path)
		}
		rows := crawlLogRows(t, e.st, "")
		if len(rows) == 0 || rows[0].ErrorClass != ClassSSRF || rows[0].HTTPStatus != nil || rows[0].ArticleURL != inMap {
			t.Errorf("refused hop not logged as an SSRF refusal: %+v", rows)
		}
	})
	t.Run("robots.txt", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		o := newOutsideSite(t)
		o.robotsTo = "http://" + gd + "/robots.txt"
		c := o.client(t, e)
		e.advancing(t, true)
		_, err := c.Do(context.Background(), Request{URL: "http://" + outsideHost + "/page.html", Purpose: model.PurposeDetail})
		if !IsRobotsDisallowed(err) || o.robotsAsked.Load() != 1 {
			t.Fatalf("robots.txt redirected into the map: %v (robots.txt asked %d times), want fail-closed", err, o.robotsAsked.Load())
		}
		if got := e.w.AccessLog(gd); len(got) != 0 {
			t.Errorf("the mapped host saw %d requests, e.g. %s", len(got), got[0].Path)
		}
	})
	t.Run("mapped to mapped", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		e.advancing(t, true)
		if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultRedirect, PathPrefix: "/go", Location: inMap}); err != nil {
			t.Fatal(err)
		}
		r, err := e.c.Do(context.Background(), Request{URL: "http://" + yingde + "/go", Purpose: model.PurposeDetail})
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("redirect between mapped hosts: %v, %+v", err, r)
		}
		seen := false
		for _, a := range e.w.AccessLog(gd) {
			seen = seen || a.Path == "/"
		}
		if !seen {
			t.Error("the redirect between mapped hosts was not followed")
		}
	})
}

// TestGuardCheckRedirect: the rule on its own, as the guard's own HTTP
// client and the browser gate apply it.
func TestGuardCheckRedirect(t *testing.T) {
	g := &Guard{Resolve: ResolveMap{"www.a.gov.test": "127.0.0.1:18081", "www.b.gov.test": "127.0.0.1:18082"}}
	for _, tc := range []struct {
		from, to string
		refused  bool
	}{
		{"http://www.outside.gov.test/x", "http://www.a.gov.test/", true},
		{"http://www.outside.gov.test/x", "http://WWW.A.gov.test./", true},
		{"http://www.a.gov.test/x", "http://www.b.gov.test/", false},
		{"http://www.a.gov.test/x", "http://www.outside.gov.test/", false},
		{"http://www.outside.gov.test/x", "http://other.gov.test/", false},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		err := g.CheckRedirect(from, to)
		if (err != nil) != tc.refused {
			t.Errorf("%s → %s: %v, refused want %v", tc.from, tc.to, err, tc.refused)
		}
	}
}

// TestBrowserRedirectIntoTheResolveMap: on the browser tier too, a page of
// a host outside the resolve map that redirects to its own site's other
// name — which the map pins — does not take Chromium there: the pinned
// host sees nothing, not even a robots.txt request.
func TestBrowserRedirectIntoTheResolveMap(t *testing.T) {
	needChromium(t)
	const outside, pinned = "outside.gov.test", "www.outside.gov.test"
	o := newOutsideSite(t)
	pages := newPageServer(t, map[string]string{"/": "<html><body>pinned</body></html>", "/robots.txt": "User-agent: *\nAllow: /\n"})
	e := newSimEnv(t, 1, ClientOptions{})
	resolve := ResolveMap(e.w.ResolveMap())
	resolve[pinned] = pages.Listener.Addr().String()
	c, err := NewClient(ClientOptions{
		Store: e.st, Clock: e.clock, Resolve: resolve,
		Version: "test", ContactURL: "https://zhizhi.example/contact", Logger: quietLogger(),
		Browser:  Chromium("", quietLogger()),
		LookupIP: fakeDNS(t, map[string][]string{outside: {outsideIP}}),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == net.JoinHostPort(outsideIP, "80") {
				addr = o.srv.Listener.Addr().String()
			}
			if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
				t.Errorf("guard let a connection to %s through", addr)
				return nil, fmt.Errorf("test dialer: %s is not loopback", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetSitePolicy(outside, SitePolicy{RespectRobots: true, Strategy: TierBrowser})
	e.c = c
	e.advancing(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := "http://" + outside + "/go?to=" + url.QueryEscape("http://"+pinned+"/")
	r, err := c.Do(ctx, Request{URL: start, Tier: TierBrowser})
	if err == nil && strings.Contains(string(r.Body), "pinned") {
		t.Errorf("the browser followed %s into the resolve map: %.200s", outside, r.Body)
	}
	if got := pages.seen(); len(got) != 0 {
		t.Errorf("the pinned host saw %v", got)
	}
	if o.robotsAsked.Load() == 0 {
		t.Error("the outside site was never asked: the test did not run the page")
	}
}
