package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// TestRobotsFailureRetriedOnBackoff: a robots.txt answering 500 keeps the
// host closed, but is asked for again 1, 2, 4 and 8 minutes after each
// failure (not held for an hour), and a restart in the middle forgives
// nothing. The 5th failed fetch is the host's 5th consecutive error, so the
// breaker opens for 24 h and the next retry waits for it.
func TestRobotsFailureRetriedOnBackoff(t *testing.T) {
	ctx := context.Background()
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	if err := e.w.SetFault(lianzhou, sim.Fault{Kind: sim.FaultRobots500}); err != nil {
		t.Fatal(err)
	}
	u := "http://" + lianzhou + "/"
	c := e.c
	refused := func(when string) error {
		t.Helper()
		_, err := c.Do(ctx, Request{URL: u, Purpose: model.PurposeList})
		var re *RobotsError
		if !errors.As(err, &re) || !re.Unreachable || !IsHostStop(err) {
			t.Fatalf("%s: %v, want refused: robots.txt unreachable", when, err)
		}
		return err
	}
	asked := func() []time.Time {
		paths, at := arrivals(e.w, lianzhou)
		for _, p := range paths {
			if p != "/robots.txt" {
				t.Fatalf("the sim saw %v: a closed host was asked for more than robots.txt", paths)
			}
		}
		return at
	}

	refused("first request")
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute} {
		if i == 2 {
			c = e.client(t, ClientOptions{}) // a restart: the count is in the database
		}
		e.clock.Advance(wait - time.Second)
		refused("a second before the retry")
		if n := len(asked()); n != i+1 {
			t.Fatalf("%v after failure %d robots.txt was asked again (%d asks), want not before %v", wait-time.Second, i+1, n, wait)
		}
		e.clock.Advance(time.Second)
		err := refused("at the retry")
		at := asked()
		if len(at) != i+2 {
			t.Fatalf("%v after failure %d robots.txt was asked %d times in all, want %d", wait, i+1, len(at), i+2)
		}
		if gap := at[i+1].Sub(at[i]); gap != wait {
			t.Errorf("retry %d came %v after the failure, want %v", i+1, gap, wait)
		}
		if i == 1 {
			// The 3rd failure: the next try is 4 minutes later, and says so.
			if want := "next try at " + at[2].Add(4*time.Minute).UTC().Format(time.RFC3339); !strings.Contains(err.Error(), want) {
				t.Errorf("message %q, want it to say %q", err, want)
			}
		}
	}
	at := asked()
	st, err := e.st.GetRobotsState(ctx, "http://"+lianzhou+":80")
	if err != nil || st.Failures != 5 || st.FailingSince == nil || !st.FailingSince.Equal(at[0]) {
		t.Fatalf("robots_state %+v (%v), want 5 failures since %v", st, err, at[0])
	}

	// The next retry is due 16 minutes after the 5th failure, but the
	// breaker opened with it.
	e.clock.Advance(16 * time.Minute)
	_, err = c.Do(ctx, Request{URL: u, Purpose: model.PurposeList})
	var be *BlockedError
	if !errors.As(err, &be) || be.Reason != "breaker open" || !be.Until.Equal(at[4].Add(24*time.Hour)) {
		t.Fatalf("after 5 failed robots.txt fetches: %v, want the breaker open until 24 h after the 5th (%v)", err, at[4])
	}
	if len(asked()) != 5 {
		t.Fatal("robots.txt was asked while the breaker was open")
	}

	// The site recovers; 24 h after the 5th failure robots.txt is read and
	// the host is crawled again.
	e.w.ClearFaults(lianzhou)
	e.clock.Set(at[4].Add(24 * time.Hour))
	if r := mustDo(t, c, Request{URL: u, Purpose: model.PurposeList}); r.Status != http.StatusOK {
		t.Fatalf("after recovery: status %d", r.Status)
	}
	if st, err := e.st.GetRobotsState(ctx, "http://"+lianzhou+":80"); err != nil || st.Status != 200 || st.Failures != 0 || st.FailingSince != nil {
		t.Errorf("robots_state after recovery %+v (%v), want status 200 and no failures", st, err)
	}
}

// TestRobotsFailureRetryDelays: the retry schedule from its contract: 1, 2,
// 4, 8, 16 and 32 minutes, then never more than an hour.
func TestRobotsFailureRetryDelays(t *testing.T) {
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		if got := RobotsRetryDelay(i + 1); got != w {
			t.Errorf("after failure %d: retry in %v, want %v", i+1, got, w)
		}
	}
	if got := RobotsRetryDelay(1000); got != time.Hour {
		t.Errorf("after failure 1000: retry in %v, want the 1 h cap", got)
	}
}

// TestRobotsUnreachableConnectionRefused: a host whose robots.txt cannot
// be reached at all is refused with a sentence that says so, not as if a
// robots.txt line had decided it.
func TestRobotsUnreachableConnectionRefused(t *testing.T) {
	const gone = "www.gone.gov.test"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	c := e.clientWith(t, ResolveMap{gone: addr}, ClientOptions{})
	_, err = c.Do(context.Background(), Request{URL: "http://" + gone + "/zwgk/", Purpose: model.PurposeList})
	var re *RobotsError
	if !errors.As(err, &re) || !re.Unreachable || !IsHostStop(err) {
		t.Fatalf("robots.txt on a closed port: %v, want refused: robots.txt unreachable", err)
	}
	st, serr := e.st.GetRobotsState(context.Background(), "http://"+gone+":80")
	if serr != nil || st.Failures != 1 || st.LastError != "connection refused" || st.FailingSince == nil {
		t.Fatalf("robots_state %+v (%v), want 1 failure, error connection refused", st, serr)
	}
	want := "connection refused — robots.txt unreachable, not crawling this host (fail-closed); failing since " +
		st.FailingSince.UTC().Format(time.RFC3339) + ", next try at " + st.FailingSince.Add(time.Minute).UTC().Format(time.RFC3339)
	if err.Error() != want {
		t.Errorf("message\n %q\nwant\n %q", err, want)
	}
	if ErrorClass(0, err) != ClassRobots {
		t.Errorf("error class %q, want %q", ErrorClass(0, err), ClassRobots)
	}
}

// TestRobotsCacheKeyIsOrigin: robots.txt belongs to a scheme, host and
// port (RFC 9309): the same host on another port has its own file, so a
// failure on one port does not close the other, and both are kept.
func TestRobotsCacheKeyIsOrigin(t *testing.T) {
	ctx := context.Background()
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	if err := e.w.SetFault(yingde, sim.Fault{Kind: sim.FaultRobots500, Count: 1}); err != nil {
		t.Fatal(err)
	}
	page := truthURL(t, e.w, yingde, "/")
	_, err := e.c.Do(ctx, Request{URL: page, Purpose: model.PurposeDetail})
	if !IsRobotsDisallowed(err) {
		t.Fatalf("port 80 with robots.txt answering 500: %v, want refused", err)
	}
	other := strings.Replace(page, yingde, yingde+":8080", 1)
	if r := mustDo(t, e.c, Request{URL: other, Purpose: model.PurposeDetail}); r.Status != http.StatusOK {
		t.Fatalf("port 8080: status %d", r.Status)
	}
	if _, err := e.c.Do(ctx, Request{URL: page, Purpose: model.PurposeDetail}); !IsRobotsDisallowed(err) {
		t.Errorf("port 80 after port 8080 was read: %v, want still refused until its retry", err)
	}
	if paths, _ := arrivals(e.w, yingde); strings.Join(paths, " ") != "/robots.txt /robots.txt "+strings.TrimPrefix(page, "http://"+yingde) {
		t.Errorf("the sim saw %v, want robots.txt once per origin, then the page on port 8080", paths)
	}
	for origin, want := range map[string]int{"http://" + yingde + ":80": 500, "http://" + yingde + ":8080": 200} {
		st, err := e.st.GetRobotsState(ctx, origin)
		if errors.Is(err, store.ErrNotFound) || st.Status != want {
			t.Errorf("robots_state of %s: %+v (%v), want status %d", origin, st, err, want)
		}
	}
}

// TestRobotsOriginKey: the key of each URL's robots.txt.
func TestRobotsOriginKey(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://www.gd.gov.cn/a", "http://www.gd.gov.cn:80"},
		{"https://WWW.GD.GOV.CN./a", "https://www.gd.gov.cn:443"},
		{"http://www.gd.gov.cn:8080/a", "http://www.gd.gov.cn:8080"},
		{"https://www.gd.gov.cn:443/a", "https://www.gd.gov.cn:443"},
		{"http://[2001:db8::1]/a", "http://[2001:db8::1]:80"},
	} {
		if got := robotsOrigin(mustParseURL(t, tc.url)); got != tc.want {
			t.Errorf("origin of %s = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func mustParseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
