package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const host = "www.gd.gov.test"
	const page = "http://www.gd.gov.test/zwgk/wjk/"
	normal := get(t, c, "GET", page)

	tests := []struct {
		name  string
		fault Fault
		check func(t *testing.T)
	}{
		{"429 with Retry-After", Fault{Kind: Fault429, RetryAfter: "5"}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if r.status != 429 || r.header.Get("Retry-After") != "5" {
				t.Errorf("status %d Retry-After %q", r.status, r.header.Get("Retry-After"))
			}
		}},
		{"run of 503", Fault{Kind: Fault503, Count: 2}, func(t *testing.T) {
			got := []int{get(t, c, "GET", page).status, get(t, c, "GET", page).status, get(t, c, "GET", page).status}
			if got[0] != 503 || got[1] != 503 || got[2] != 200 {
				t.Errorf("statuses %v, want [503 503 200]", got)
			}
		}},
		{"path prefix", Fault{Kind: Fault503, PathPrefix: "/zwgk/zcjd/"}, func(t *testing.T) {
			if s := get(t, c, "GET", page).status; s != 200 {
				t.Errorf("other column: %d", s)
			}
			if s := get(t, c, "GET", "http://www.gd.gov.test/zwgk/zcjd/").status; s != 503 {
				t.Errorf("faulty column: %d", s)
			}
		}},
		{"hang until the client gives up", Fault{Kind: FaultHang}, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", page, nil)
			res, err := c.Do(req)
			if err == nil {
				res.Body.Close()
				t.Fatalf("hanging response answered %d", res.StatusCode)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v, want deadline exceeded", err)
			}
		}},
		{"slow keeps the content", Fault{Kind: FaultSlow, BytesPerSec: 4000}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if r.status != 200 || !bytes.Equal(r.body, normal.body) {
				t.Errorf("slow response: status %d, %d bytes of %d", r.status, len(r.body), len(normal.body))
			}
			// The log holds every answer its client has read in full.
			var last Access
			for _, a := range w.AccessLog(host) {
				if a.Fault == FaultSlow {
					last = a
				}
			}
			if last.Bytes != int64(len(normal.body)) {
				t.Errorf("log: slow request with %d bytes, want %d", last.Bytes, len(normal.body))
			}
			// Slow means slow: the body trickles out in tenth-second chunks
			// of 400 bytes, so a page of several chunks takes at least one
			// pause (a lower bound: a busy machine can only make it longer;
			// unthrottled, it takes microseconds).
			if len(normal.body) < 3*400 {
				t.Fatalf("page of %d bytes is too small to show a trickle", len(normal.body))
			}
			if d := last.Finished.Sub(last.Arrived); d < 100*time.Millisecond {
				t.Errorf("slow response took %v for %d bytes at 4000 B/s, want at least 100ms", d, len(normal.body))
			}
		}},
		{"huge body", Fault{Kind: FaultHuge}, func(t *testing.T) {
			res, err := c.Get(page)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			n, _ := io.Copy(io.Discard, res.Body)
			if res.ContentLength != HugeSize || n != HugeSize {
				t.Errorf("Content-Length %d, read %d, want %d", res.ContentLength, n, HugeSize)
			}
		}},
		{"gzip bomb", Fault{Kind: FaultGzipBomb}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if r.header.Get("Content-Encoding") != "gzip" || len(r.body) > 3<<20 {
				t.Fatalf("Content-Encoding %q, %d compressed bytes", r.header.Get("Content-Encoding"), len(r.body))
			}
			zr, err := gzip.NewReader(bytes.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			// Inflate only a prefix: enough to show a ratio far beyond any page.
			const limit = 256 << 20
			n, _ := io.Copy(io.Discard, io.LimitReader(zr, limit))
			if n != limit || limit/len(r.body) < 100 {
				t.Errorf("inflated %d bytes from %d", n, len(r.body))
			}
		}},
		{"redirect loop", Fault{Kind: FaultRedirectLoop}, func(t *testing.T) {
			r1 := get(t, c, "GET", page)
			r2 := get(t, c, "GET", "http://www.gd.gov.test"+r1.header.Get("Location"))
			if r1.status != 302 || r2.status != 302 || r2.header.Get("Location") != "/zwgk/wjk/" {
				t.Errorf("statuses %d %d, second Location %q", r1.status, r2.status, r2.header.Get("Location"))
			}
		}},
		{"redirect to metadata", Fault{Kind: FaultRedirect, Location: "http://169.254.169.254/latest/meta-data/"}, func(t *testing.T) {
			r := get(t, c, "GET", page) // never followed: the client stops at the 302
			if r.status != 302 || r.header.Get("Location") != "http://169.254.169.254/latest/meta-data/" {
				t.Errorf("status %d Location %q", r.status, r.header.Get("Location"))
			}
		}},
		{"redirect to loopback", Fault{Kind: FaultRedirect, Location: "http://127.0.0.1:9/admin"}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if r.status != 302 || r.header.Get("Location") != "http://127.0.0.1:9/admin" {
				t.Errorf("status %d Location %q", r.status, r.header.Get("Location"))
			}
		}},
		{"robots 500", Fault{Kind: FaultRobots500}, func(t *testing.T) {
			if s := get(t, c, "GET", "http://www.gd.gov.test/robots.txt").status; s != 500 {
				t.Errorf("robots.txt: %d", s)
			}
			if s := get(t, c, "GET", page).status; s != 200 {
				t.Errorf("page under robots_500: %d", s)
			}
		}},
		{"robots tightened", Fault{Kind: FaultRobotsTighten}, func(t *testing.T) {
			r := get(t, c, "GET", "http://www.gd.gov.test/robots.txt")
			if !strings.Contains(string(r.body), "Disallow: /\n") {
				t.Errorf("robots.txt: %s", r.body)
			}
			for _, a := range w.Truth() {
				if a.SiteCode == "gd_ref" && !a.RobotsDisallowed {
					t.Errorf("%s not disallowed in truth", a.URL)
				}
			}
		}},
		{"charset_lie", Fault{Kind: FaultCharsetLie}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if ct := r.header.Get("Content-Type"); ct != "text/html; charset=gbk" || !bytes.Equal(r.body, normal.body) {
				t.Errorf("UTF-8 page served as %q (body changed: %v), want the same page labelled gbk", ct, !bytes.Equal(r.body, normal.body))
			}
		}},
		{"captcha", Fault{Kind: FaultCaptcha}, func(t *testing.T) {
			r := get(t, c, "GET", page)
			if !bytes.Contains(r.body, []byte(CaptchaMarker)) || bytes.Contains(r.body, []byte(ChallengeMarker)) {
				t.Errorf("captcha page: %s", r.body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := w.SetFault(host, tt.fault); err != nil {
				t.Fatal(err)
			}
			defer w.ClearFaults(host)
			tt.check(t)
		})
	}
	// Cleared faults leave the site as it was.
	if r := get(t, c, "GET", page); r.status != 200 || !bytes.Equal(r.body, normal.body) {
		t.Errorf("after clearing: status %d", r.status)
	}
	if err := w.SetFault(host, Fault{Kind: "meteor"}); err == nil {
		t.Error("unknown fault kind accepted")
	}
	if err := w.SetFault("www.example.com", Fault{Kind: Fault429}); err == nil {
		t.Error("fault on unknown host accepted")
	}
}

func TestControlEndpoints(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := &http.Client{Timeout: 10 * time.Second}
	base := w.ControlURL()

	res, err := c.Post(base+"/__sim/faults", "application/json", strings.NewReader(`{"host":"www.gov.test","kind":"429","retry_after":"7"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("POST fault: %d", res.StatusCode)
	}
	sc := client(w)
	if r := get(t, sc, "GET", "http://www.gov.test/zhengce/zuixin/feed.json"); r.status != 429 || r.header.Get("Retry-After") != "7" {
		t.Errorf("fault set over HTTP: status %d", r.status)
	}
	req, _ := http.NewRequest("DELETE", base+"/__sim/faults?host=www.gov.test", nil)
	if res, err := c.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("DELETE faults: %v", err)
	} else {
		res.Body.Close()
	}
	if r := get(t, sc, "GET", "http://www.gov.test/zhengce/zuixin/feed.json"); r.status != 200 {
		t.Errorf("after DELETE: status %d", r.status)
	}
	res, _ = c.Post(base+"/__sim/faults", "application/json", strings.NewReader(`{"host":"www.gov.test","kind":"bogus"}`))
	if res.StatusCode != 400 {
		t.Errorf("bogus fault: %d", res.StatusCode)
	}
	res.Body.Close()

	res, err = c.Post(base+"/__sim/advance?hours=48", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep AdvanceReport
	_ = json.NewDecoder(res.Body).Decode(&rep)
	res.Body.Close()
	if !rep.To.Equal(DefaultNow.Add(48*time.Hour)) || !w.Now().Equal(rep.To) {
		t.Errorf("advance over HTTP: report to %v, clock %v", rep.To, w.Now())
	}

	var truth []TruthArticle
	getJSON(t, c, base+"/__sim/truth", &truth)
	if len(truth) != len(w.Truth()) || len(truth) == 0 {
		t.Errorf("truth over HTTP: %d articles", len(truth))
	}
	var log []Access
	getJSON(t, c, base+"/__sim/log?host=www.gov.test", &log)
	if len(log) != 2 || log[0].Status != 429 || log[1].Status != 200 {
		t.Errorf("log over HTTP: %+v", log)
	}
	var resolve struct {
		Hosts   map[string]string `json:"hosts"`
		Resolve string            `json:"resolve"`
	}
	getJSON(t, c, base+"/__sim/resolve", &resolve)
	if resolve.Resolve != w.ResolveString() || len(resolve.Hosts) != 8 || !strings.Contains(resolve.Resolve, "sim.gov.test=127.0.0.1:") {
		t.Errorf("resolve: %+v", resolve)
	}
}

func getJSON(t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("decode %s: %v", u, err)
	}
}

func TestAccessLogCountsInFlight(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const host = "www.yingde.gov.test"
	if err := w.SetFault(host, Fault{Kind: FaultHang, PathPrefix: "/hang"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hung := make(chan struct{})
	go func() {
		defer close(hung)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+host+"/hang", nil)
		if res, err := c.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	for w.inflight[host].Load() != 1 {
		time.Sleep(5 * time.Millisecond)
	}
	get(t, c, "GET", "http://"+host+"/robots.txt", "User-Agent", "zhizhi-test/1")
	cancel()
	<-hung
	for w.inflight[host].Load() != 0 {
		time.Sleep(5 * time.Millisecond)
	}
	get(t, c, "HEAD", "http://"+host+"/ydfgw/gkmlpt/index", "Cookie", "a=b")

	log := w.AccessLog(host)
	if len(log) != 3 {
		t.Fatalf("%d log entries, want 3: %+v", len(log), log)
	}
	hang, robots, head := log[0], log[1], log[2]
	if hang.Path != "/hang" || hang.Fault != FaultHang || hang.Bytes != 0 || hang.InFlightAtArrival != 0 {
		t.Errorf("hang entry: %+v", hang)
	}
	if robots.InFlightAtArrival != 1 || robots.Status != 200 || robots.UserAgent != "zhizhi-test/1" || robots.Bytes == 0 || robots.Cookie {
		t.Errorf("robots entry: %+v", robots)
	}
	if head.InFlightAtArrival != 0 || head.Method != "HEAD" || head.Bytes != 0 || !head.Cookie || head.Finished.Before(head.Arrived) {
		t.Errorf("head entry: %+v", head)
	}
	if !hang.Finished.After(robots.Arrived) {
		t.Error("the hanging request finished before the second arrived")
	}
	if n := len(w.AllAccess()); n != 3 {
		t.Errorf("AllAccess: %d entries", n)
	}
	w.ResetLog()
	if n := len(w.AccessLog(host)); n != 0 {
		t.Errorf("after reset: %d entries", n)
	}
}

// TestAccessLogClockAndOverallInFlight: Options.Clock stamps the log, and
// InFlightAllAtArrival counts requests at other hosts too.
func TestAccessLogClockAndOverallInFlight(t *testing.T) {
	stamp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	w := startWorld(t, Options{Seed: 1, Clock: func() time.Time { return stamp }})
	c := client(w)
	const hangHost, host = "www.yingde.gov.test", "www.qingcheng.gov.test"
	if err := w.SetFault(hangHost, Fault{Kind: FaultHang, PathPrefix: "/hang"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hung := make(chan struct{})
	go func() {
		defer close(hung)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+hangHost+"/hang", nil)
		if res, err := c.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	for w.inflightAll.Load() != 1 {
		time.Sleep(5 * time.Millisecond)
	}
	get(t, c, "GET", "http://"+host+"/robots.txt")
	cancel()
	<-hung
	log := w.AccessLog(host)
	if len(log) != 1 {
		t.Fatalf("%d log entries at %s, want 1", len(log), host)
	}
	a := log[0]
	if !a.Arrived.Equal(stamp) || !a.Finished.Equal(stamp) {
		t.Errorf("stamps %v..%v, want both %v from Options.Clock", a.Arrived, a.Finished, stamp)
	}
	if a.InFlightAtArrival != 0 || a.InFlightAllAtArrival != 1 {
		t.Errorf("in flight at arrival: host %d, all %d; want 0 and 1", a.InFlightAtArrival, a.InFlightAllAtArrival)
	}
}

// TestInFlightEndsWithTheLastByte: once a client holds the whole declared
// body, the request no longer counts as in flight, even if the handler has
// not returned yet, so a polite client's next request is not miscounted.
func TestInFlightEndsWithTheLastByte(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const host = "www.yingde.gov.test"
	if err := w.SetFault(host, Fault{Kind: FaultSlow, BytesPerSec: 100}); err != nil {
		t.Fatal(err)
	}
	r := get(t, c, "GET", "http://"+host+"/robots.txt")
	if len(r.body) <= 10 {
		t.Fatalf("robots.txt too short (%d bytes) to be trickled", len(r.body))
	}
	if n, all := w.inflight[host].Load(), w.inflightAll.Load(); n != 0 || all != 0 {
		t.Errorf("after the whole body arrived: in flight at host %d, overall %d; want 0", n, all)
	}
}
