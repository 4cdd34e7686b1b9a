package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// These tests are about several zhizhi processes sharing one database (ten
// zhizhi fetch runs in a row, two crawls at once): what one process did to
// a host binds the next. A "process" is a Client on a store of its own,
// opened on the same database and data directory.

// otherProcess opens a second store on e's database and data directory
// and a client on it: what another zhizhi process would have.
func (e *simEnv) otherProcess(t testing.TB) *Client {
	t.Helper()
	var file string
	if err := e.st.DB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatalf("database file: %v", err)
	}
	st, err := store.Open(context.Background(), "sqlite://"+file, e.st.DataDir())
	if err != nil {
		t.Fatalf("open the database again: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	saved := e.st
	e.st = st
	defer func() { e.st = saved }()
	return e.client(t, ClientOptions{})
}

// advancingAll moves the fake clock to the next sleeper's deadline whenever
// none of the clients has a request on the wire, for the rest of the test.
func advancingAll(t testing.TB, clock *FakeClock, clients ...*Client) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			idle := true
			for _, c := range clients {
				if c.Limiter().InFlight() != 0 {
					idle = false
				}
			}
			if next, ok := clock.NextWake(); ok && idle {
				clock.Set(next)
				continue
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// hostURLs returns up to n article URLs of host that robots.txt allows.
func hostURLs(t testing.TB, w *sim.World, host string, n int) []string {
	t.Helper()
	var urls []string
	for _, a := range w.Truth() {
		if a.Host == host && !a.RobotsDisallowed && len(urls) < n {
			urls = append(urls, a.URL)
		}
	}
	if len(urls) < n {
		t.Fatalf("%s has %d articles, want %d", host, len(urls), n)
	}
	return urls
}

// TestTwoProcessesShareTheHostLimits: two processes on one database crawl
// one host at once, each with several workers. The site sees what one
// polite crawler would send: never two requests in flight, and in every
// window of t seconds at most 3 + t/2 requests.
func TestTwoProcessesShareTheHostLimits(t *testing.T) {
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			var a, b *Client
			if dialect == store.DialectPostgres {
				// Two clients on one pool: each request's lock is a
				// session of its own, as another process's would be.
				e.st = storetest.Postgres(t)
				a, b = e.client(t, ClientOptions{}), e.client(t, ClientOptions{})
			} else {
				a, b = e.c, e.otherProcess(t)
			}
			twoProcessesOneHost(t, e, a, b)
		})
	}
}

func twoProcessesOneHost(t *testing.T, e *simEnv, a, b *Client) {
	advancingAll(t, e.clock, a, b)
	urls := hostURLs(t, e.w, yingde, 24)
	// A few slow answers keep requests on the wire long enough (in wall
	// time) for the other process to try to join them.
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultSlow, BytesPerSec: 20000, Count: 4}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, c := range []*Client{a, b} {
		work := make(chan string)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u := range work {
					if _, err := c.Do(context.Background(), Request{URL: u, Purpose: model.PurposeDetail}); err != nil {
						t.Errorf("process %d: %s: %v", i+1, u, err)
					}
				}
			}()
		}
		go func() {
			for _, u := range urls[i*12 : i*12+12] {
				work <- u
			}
			close(work)
		}()
	}
	wg.Wait()

	log := e.w.AccessLog(yingde)
	if len(log) < 26 { // two robots.txt and 24 pages
		t.Fatalf("the sim saw %d requests, want 26", len(log))
	}
	for _, r := range log {
		if r.InFlightAtArrival != 0 {
			t.Errorf("%s arrived with %d other requests in flight at the host", r.Path, r.InFlightAtArrival)
		}
	}
	checkWindowRule(t, yingde, log)
}

// TestRestartContinuesTheBucket: a new process right after a burst waits
// for its token like the old one would have; after a long pause a new
// process may use the whole burst again.
func TestRestartContinuesTheBucket(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	urls := hostURLs(t, e.w, yingde, 6)
	first := e.c
	advancingAll(t, e.clock, first)
	mustDo(t, first, Request{URL: urls[0]}) // robots.txt and a page
	mustDo(t, first, Request{URL: urls[1]}) // the third token of the burst

	second := e.otherProcess(t)
	advancingAll(t, e.clock, second)
	mustDo(t, second, Request{URL: urls[2]}) // robots.txt revalidated, then the page
	_, at := arrivals(e.w, yingde)
	if len(at) != 5 {
		t.Fatalf("the sim saw %d requests, want 5", len(at))
	}
	if gap := at[3].Sub(at[2]); gap != DefaultInterval {
		t.Errorf("the restarted process's first request came %v after the burst, want %v (its token)", gap, DefaultInterval)
	}
	if gap := at[4].Sub(at[3]); gap != DefaultInterval {
		t.Errorf("its second request came %v later, want %v", gap, DefaultInterval)
	}

	// An idle host refills: after 10 s a new process has the burst again.
	e.clock.Advance(10 * time.Second)
	third := e.otherProcess(t)
	advancingAll(t, e.clock, third)
	mustDo(t, third, Request{URL: urls[3]})
	mustDo(t, third, Request{URL: urls[4]})
	_, at = arrivals(e.w, yingde)
	if len(at) != 8 || !at[7].Equal(at[5]) {
		t.Errorf("after a pause the sim saw %d requests ending %v, want 8 at one instant (a full burst)", len(at), at[5:])
	}
	checkWindowRule(t, yingde, e.w.AccessLog(yingde))
}

// TestRobotsTightenedSeenByNewProcess: process A reads robots.txt; the
// site tightens it; process B, at the same instant, revalidates the stored
// copy with a conditional GET before its first request and obeys the new
// rule. Unchanged, the revalidation costs a 304.
func TestRobotsTightenedSeenByNewProcess(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tighten  bool
		wantCode int
	}{
		{"tightened", true, http.StatusOK},
		{"unchanged", false, http.StatusNotModified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			u := truthURL(t, e.w, qingcheng, "/qcfgw/")
			mustDo(t, e.c, Request{URL: u})
			if tc.tighten {
				if err := e.w.SetFault(qingcheng, sim.Fault{Kind: sim.FaultRobotsTighten, Path: "/qcfgw/"}); err != nil {
					t.Fatal(err)
				}
			}
			from := len(e.w.AccessLog(qingcheng))
			b := e.otherProcess(t)
			advancingAll(t, e.clock, e.c, b)
			start := e.clock.Now()
			_, err := b.Do(context.Background(), Request{URL: u})
			log := e.w.AccessLog(qingcheng)[from:]
			if len(log) == 0 || log[0].Path != "/robots.txt" || log[0].Status != tc.wantCode || !log[0].Arrived.Equal(start) {
				t.Fatalf("process B's first request %+v, want /robots.txt answered %d at once", log, tc.wantCode)
			}
			var robots int
			for _, r := range log {
				if r.Path == "/robots.txt" {
					robots++
				}
			}
			if robots != 1 {
				t.Errorf("process B asked for robots.txt %d times, want once", robots)
			}
			if !tc.tighten {
				if err != nil || len(log) != 2 {
					t.Errorf("unchanged robots.txt: %v, sim saw %d requests from B, want robots.txt and the page", err, len(log))
				}
				return
			}
			var re *RobotsError
			if !errors.As(err, &re) || re.Rule != "Disallow: /qcfgw/" {
				t.Fatalf("process B: %v, want blocked by the new rule", err)
			}
			if len(log) != 1 {
				t.Errorf("the sim saw %d requests from B, want only robots.txt", len(log))
			}
		})
	}
}

// TestCaptchaIsRemembered: after a CAPTCHA, no request reaches the host,
// from this process or a new one, a day later or not, until a person
// clears the block; the refusal says so.
func TestCaptchaIsRemembered(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultCaptcha, PathPrefix: "/ydfgw/", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Do(context.Background(), Request{URL: truthURL(t, e.w, yingde, "/ydfgw/")}); !errors.Is(err, ErrCaptcha) {
		t.Fatalf("captcha page: %v, want ErrCaptcha", err)
	}
	met := e.clock.Now()
	seen := len(e.w.AccessLog(yingde))
	other := hostURLs(t, e.w, yingde, 3)[2]

	for _, tc := range []struct {
		name   string
		client func() *Client
		wait   time.Duration
	}{
		{"same process", func() *Client { return e.c }, 0},
		{"new process", func() *Client { return e.otherProcess(t) }, 0},
		{"new process a day later", func() *Client { return e.otherProcess(t) }, 25 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.Advance(tc.wait)
			_, err := tc.client().Do(context.Background(), Request{URL: other})
			var be *BlockedError
			if !errors.As(err, &be) || be.Cause != BlockCaptcha || !IsHostStop(err) || !errors.Is(err, ErrCaptcha) {
				t.Fatalf("after a CAPTCHA: %v, want a CAPTCHA block (a host stop)", err)
			}
			for _, want := range []string{"CAPTCHA", "until a person", "clear", met.UTC().Format(time.RFC3339)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not say %q", err, want)
				}
			}
			if n := len(e.w.AccessLog(yingde)); n != seen {
				t.Errorf("the site saw %d more requests after its CAPTCHA", n-seen)
			}
		})
	}
	st, err := e.st.GetHostState(context.Background(), yingde)
	if err != nil || st.BlockReason != BlockCaptcha || !st.NeedsReview {
		t.Fatalf("host_state %+v (%v), want block_reason captcha and needs_review", st, err)
	}

	// A person looked and cleared it: the host may be asked again.
	if err := e.st.ClearHostBlock(context.Background(), yingde); err != nil {
		t.Fatal(err)
	}
	if r := mustDo(t, e.c, Request{URL: other}); r.Status != http.StatusOK {
		t.Errorf("after clearing: status %d", r.Status)
	}
}

var _ = fmt.Sprint

// TestRequestCountedFromItsEndAcrossProcesses: a request that ended late
// in one process is counted from its end by the next process too — the
// later date is written before the host's lock is let go.
func TestRequestCountedFromItsEndAcrossProcesses(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := NewFakeClock(t0)
		a := NewSharedLimiter(clock, st)
		rel, err := a.Acquire(ctx, "www.example.gov.test")
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(1500 * time.Millisecond)
		rel()
		b := NewSharedLimiter(clock, st)
		for range 2 {
			rel, err := b.Acquire(ctx, "www.example.gov.test")
			if err != nil {
				t.Fatal(err)
			}
			rel()
		}
		if w := b.Wait("www.example.gov.test"); w != 2*time.Second {
			t.Errorf("the other process's next request would wait %v, want 2s after the first request ended", w)
		}
	})
}
