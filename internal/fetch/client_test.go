package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// simT0 is where the fake clocks of these tests start.
var simT0 = time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC)

// simEnv is a running simulated web, a store and a client on a fake clock
// that the sim's access log shares.
type simEnv struct {
	w     *sim.World
	st    *store.Store
	clock *FakeClock
	c     *Client
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newSimEnv starts a world whose access log is stamped by a fake clock,
// and a client on that clock. No DNS is asked and only loopback is dialled.
func newSimEnv(t testing.TB, scale int, opts ClientOptions) *simEnv {
	t.Helper()
	clock := NewFakeClock(simT0)
	w, err := sim.Start(context.Background(), sim.Options{Seed: 4, Scale: scale, Clock: clock.Now})
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(w.Close)
	e := &simEnv{w: w, st: storetest.SQLite(t), clock: clock}
	e.c = e.client(t, opts)
	return e
}

// client makes another client on the same world, store and clock (a
// "restart").
func (e *simEnv) client(t testing.TB, opts ClientOptions) *Client {
	t.Helper()
	opts.Store = e.st
	if opts.Clock == nil {
		opts.Clock = e.clock
	}
	opts.Resolve = ResolveMap(e.w.ResolveMap())
	opts.Version = "test"
	opts.ContactURL = "https://zhizhi.example/contact"
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	opts.Dial = loopbackOnly(t)
	opts.LookupIP = func(ctx context.Context, host string) ([]net.IP, error) {
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

// loopbackOnly is the real dialer wrapped so that whatever the guard lets
// through can only reach loopback.
func loopbackOnly(t testing.TB) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("guard let a connection to %s through; tests may only reach loopback", addr)
			return nil, fmt.Errorf("test dialer: %s is not loopback", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// autoAdvance moves the fake clock to the next sleeper's deadline whenever
// somebody sleeps and no request is in flight, until stop is closed. Time
// never moves between a request's start and its end, so the sim's stamps
// are exactly the client's decisions. With c nil, it advances whenever
// somebody sleeps (a browser visit holds its host while its requests wait
// for tokens).
func autoAdvance(clock *FakeClock, c *Client, stop <-chan struct{}) <-chan struct{} {
	var idle func() bool
	if c != nil {
		idle = func() bool { return c.Limiter().InFlight() == 0 }
	}
	halt := clock.AutoAdvance(idle)
	done := make(chan struct{})
	go func() {
		<-stop
		halt()
		close(done)
	}()
	return done
}

// crawlLogRows returns every crawl_log row for host (all hosts when "").
func crawlLogRows(t testing.TB, st *store.Store, host string) []model.CrawlLog {
	t.Helper()
	rows, err := st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: host, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// wireRows counts rows of requests that reached the site (a status).
func wireRows(rows []model.CrawlLog) int {
	n := 0
	for _, r := range rows {
		if r.HTTPStatus != nil {
			n++
		}
	}
	return n
}

// TestPolitenessFromTheSitesSide crawls over 500 URLs of six simulated
// hosts with many goroutines at once and checks the SIM's access log: never
// two requests in flight at one host, never more than four overall, and in
// every window of t seconds at most 3 + t/2 requests per host, on the
// clock the client ran on.
func TestPolitenessFromTheSitesSide(t *testing.T) {
	e := newSimEnv(t, 4, ClientOptions{})
	hosts := map[string]bool{"www.qingcheng.gov.test": true, "www.yingde.gov.test": true,
		"www.lianzhou.gov.test": true, "www.gd.gov.test": true, "www.gov.test": true, "www.news.test": true}
	perHost := map[string][]string{}
	for _, a := range e.w.Truth() {
		if !hosts[a.Host] {
			continue
		}
		urls := perHost[a.Host]
		if len(urls) < 110 {
			urls = append(urls, a.URL)
			for _, f := range a.Attachments {
				if len(urls) < 110 {
					urls = append(urls, f.URL)
				}
			}
		}
		perHost[a.Host] = urls
	}
	var all []string
	for h := range hosts {
		all = append(all, "http://"+h+"/") // list pages
		all = append(all, perHost[h]...)
	}
	if len(perHost) < 5 || len(all) < 500 {
		t.Fatalf("the sim offers %d URLs on %d hosts; want ≥500 on ≥5", len(all), len(perHost))
	}
	// A few slow answers on every host keep requests of different hosts
	// on the wire together (in wall time; the fake clock stands still
	// meanwhile), so the overall cap is really put to the test.
	for h := range hosts {
		if err := e.w.SetFault(h, sim.Fault{Kind: sim.FaultSlow, BytesPerSec: 5000, Count: 3}); err != nil {
			t.Fatal(err)
		}
	}
	// Interleave hosts so every worker competes for every host.
	sort.Slice(all, func(i, j int) bool { return hashStr(all[i]) < hashStr(all[j]) })

	stop := make(chan struct{})
	advDone := autoAdvance(e.clock, e.c, stop)
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := map[string]int{}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				_, err := e.c.Do(context.Background(), Request{URL: u, Purpose: model.PurposeDetail})
				if err != nil {
					mu.Lock()
					fails[ErrorClass(0, err)]++
					mu.Unlock()
				}
			}
		}()
	}
	for _, u := range all {
		work <- u
	}
	close(work)
	wg.Wait()
	close(stop)
	<-advDone

	var log []sim.Access
	for h := range hosts {
		log = append(log, e.w.AccessLog(h)...)
	}
	if len(log) < 500 {
		t.Fatalf("the sim saw %d requests, want ≥500 (failures by class: %v)", len(log), fails)
	}
	for class, n := range fails {
		// gd_ref disallows a column in robots.txt: those are refused.
		if class != ClassRobots {
			t.Errorf("%d requests failed with %s", n, class)
		}
	}
	for _, a := range log {
		if a.InFlightAtArrival != 0 {
			t.Errorf("%s %s arrived with %d other requests in flight at the host", a.Host, a.Path, a.InFlightAtArrival)
		}
		if a.InFlightAllAtArrival > 3 { // never more than 4 overall
			t.Errorf("%s %s arrived with %d other requests in flight overall", a.Host, a.Path, a.InFlightAllAtArrival)
		}
		if !strings.HasPrefix(a.UserAgent, "zhizhi/test (+") {
			t.Errorf("%s %s: User-Agent %q", a.Host, a.Path, a.UserAgent)
		}
	}
	for h := range hosts {
		checkWindowRule(t, h, e.w.AccessLog(h))
	}
	rows := crawlLogRows(t, e.st, "")
	if got := wireRows(rows); got != len(log) {
		t.Errorf("crawl_log has %d rows of requests that reached a site, the sims' logs %d", got, len(log))
	}
	if refused := len(rows) - wireRows(rows); refused != fails[ClassRobots] {
		t.Errorf("crawl_log has %d refusals, the client returned %d", refused, fails[ClassRobots])
	}
	t.Logf("%d requests to %d hosts over %v of client time; %d refused by robots.txt", len(log), len(hosts), e.clock.Now().Sub(simT0), fails[ClassRobots])
}

func hashStr(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// checkWindowRule: for every pair of requests i ≤ j to one host, the
// tightest window holding both, of length t, holds j-i+1 ≤ 3 + t/2
// requests.
func checkWindowRule(t *testing.T, host string, log []sim.Access) {
	t.Helper()
	if v := sim.BucketViolation(host, log, 0); v != "" {
		t.Error(v)
	}
}

// advancing runs the fake clock for the rest of the test.
func (e *simEnv) advancing(t testing.TB, idleOnly bool) {
	stop := make(chan struct{})
	c := e.c
	if !idleOnly {
		c = nil
	}
	done := autoAdvance(e.clock, c, stop)
	t.Cleanup(func() { close(stop); <-done })
}

// arrivals returns the paths and clock stamps the sim saw at host.
func arrivals(w *sim.World, host string) ([]string, []time.Time) {
	var paths []string
	var at []time.Time
	for _, a := range w.AccessLog(host) {
		paths = append(paths, a.Path)
		at = append(at, a.Arrived)
	}
	return paths, at
}

func mustDo(t *testing.T, c *Client, req Request) *Response {
	t.Helper()
	resp, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatalf("Do %s: %v", req.URL, err)
	}
	return resp
}

// truthURL returns the first article URL of host whose path starts with
// prefix.
func truthURL(t testing.TB, w *sim.World, host, prefix string) string {
	t.Helper()
	for _, a := range w.Truth() {
		if a.Host == host && strings.HasPrefix(strings.TrimPrefix(a.URL, "http://"+host), prefix) && !a.RobotsDisallowed {
			return a.URL
		}
	}
	t.Fatalf("no article at %s%s", host, prefix)
	return ""
}

var _ = errors.New
var _ = url.Parse
