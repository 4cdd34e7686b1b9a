package fetch

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store/storetest"
)

// TestBrowserTierKeepsTheBucketUnderLoad: with every CPU busy, page loads
// of the city portal through the browser tier (its cookie challenge, the
// reload, the scripts a page asks for) reach the site no closer together
// than the host's bucket allows — burst 3, one more every 2 s — and never
// two at once. Judged from the site's own access log, on the wall clock:
// a request that takes its token when Chromium's gate lets it through,
// and then waits inside a starved Chromium, reaches the site later than
// its token says.
func TestBrowserTierKeepsTheBucketUnderLoad(t *testing.T) {
	needChromium(t)
	if testing.Short() {
		t.Skip("polite page loads at real rates; skipped with -short")
	}
	w, err := sim.Start(context.Background(), sim.Options{Seed: 4, Scale: 1})
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(w.Close)
	e := &simEnv{w: w, st: storetest.SQLite(t)}
	e.c = e.client(t, ClientOptions{Clock: RealClock{}, Browser: Chromium("", quietLogger())})
	// Besides the load, the first request of the page load is held for
	// 1.9 s after the gate let it through, as a starved Chromium holds
	// one (the load alone makes that happen only now and then), and the
	// page load starts with the host's bucket full: the requests after
	// the held one may then come as fast as the bucket lets them.
	var stallNext atomic.Bool
	e.c.stallBrowser = func(*http.Request) {
		if stallNext.Swap(false) {
			time.Sleep(1900 * time.Millisecond)
		}
	}
	e.c.SetSitePolicy(qingyuan, SitePolicy{RespectRobots: true, Strategy: TierDirect,
		EscalateStatus: []int{412}, EscalateSignatures: []string{sim.ChallengeMarker}, CookieTTL: 20 * time.Minute})

	// Burn every CPU for the whole test: spinning goroutines in this
	// process (which runs the browser proxy and the gate) and a shell
	// loop per CPU competing with Chromium for the machine.
	var stop atomic.Bool
	var spin sync.WaitGroup
	for range 2 * runtime.NumCPU() {
		spin.Add(1)
		go func() {
			defer spin.Done()
			x := 1
			for !stop.Load() {
				for i := range 1 << 16 {
					x = x*31 + i
				}
			}
			_ = x
		}()
	}
	defer func() { stop.Store(true); spin.Wait() }()
	for range runtime.NumCPU() {
		burn := exec.Command("sh", "-c", "while :; do :; done")
		if err := burn.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = burn.Process.Kill(); _ = burn.Wait() })
	}

	// The crawl's walk: the department index (a direct 412, so the browser
	// passes the challenge: the page, its reload, the script it asks
	// for), then the pages after it, direct with the harvested cookie, as
	// fast as the bucket lets them. The robots.txt and a 6 s rest first,
	// so the walk starts with the bucket full.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	index := "http://" + qingyuan + "/qyfgw/gkmlpt/index"
	detail := truthURL(t, w, qingyuan, "/qyfgw/")
	if _, err := e.c.Do(ctx, Request{URL: "http://" + qingyuan + "/robots.txt", Purpose: model.PurposeProbe}); err != nil {
		t.Logf("robots.txt: %v", err)
	}
	time.Sleep(6 * time.Second)
	stallNext.Store(true)
	first, err := e.c.Do(ctx, Request{URL: index, Purpose: model.PurposeIndex})
	if err != nil || first.Tier != TierBrowser {
		t.Fatalf("department index: %v (tier %v), want it through the browser", err, first)
	}
	for _, u := range []string{detail, index, detail, index} {
		if _, err := e.c.Do(ctx, Request{URL: u, Purpose: model.PurposeDetail}); err != nil {
			t.Logf("%s: %v", u, err) // what reached the site is judged below
		}
	}
	stop.Store(true)

	log := w.AccessLog(qingyuan)
	if len(log) < 8 {
		t.Fatalf("the site saw %d requests, want the page loads' requests (8 or more)", len(log))
	}
	// The contract's bucket: 3 at once, then one per 2 s. The site's clock
	// stamps a request as it arrives; 50 ms covers the stamp's own delay.
	const slack = 50 * time.Millisecond
	for i, a := range log {
		if a.InFlightAtArrival != 0 {
			t.Errorf("%s %s arrived with %d other requests in flight", a.Method, a.Path, a.InFlightAtArrival)
		}
		for j := i + 3; j < len(log); j++ {
			n := j - i + 1
			span := log[j].Arrived.Sub(a.Arrived) + slack
			if allowed := 3 + int(span/(2*time.Second)); n > allowed {
				var window strings.Builder
				for _, r := range log[i : j+1] {
					fmt.Fprintf(&window, "\n\t%s %d %s %s", r.Arrived.Format("15:04:05.000"), r.Status, r.Method, r.Path)
				}
				t.Errorf("%d requests within %v, the bucket allows %d:%s", n, span-slack, allowed, window.String())
				break
			}
		}
	}
	for _, a := range log {
		t.Logf("%s %d %s %s", a.Arrived.Format("15:04:05.000"), a.Status, a.Method, a.Path)
	}
}
