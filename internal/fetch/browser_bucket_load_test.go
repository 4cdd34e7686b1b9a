package fetch

import (
	"context"
	"fmt"
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
	e.c.SetSitePolicy(qingyuan, SitePolicy{RespectRobots: true, Strategy: TierBrowser,
		EscalateStatus: []int{412}, EscalateSignatures: []string{sim.ChallengeMarker}, CookieTTL: 20 * time.Minute})

	// Burn every CPU for the whole test: spinning goroutines in this
	// process (which runs the browser proxy and the gate) and as many
	// again competing with Chromium for the machine.
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

	pages := []string{
		"http://" + qingyuan + "/qyfgw/gkmlpt/index",
		truthURL(t, w, qingyuan, "/qyfgw/"),
		"http://" + qingyuan + "/qyfgw/gkmlpt/index",
		truthURL(t, w, qingyuan, "/"),
		"http://" + qingyuan + "/qyfgw/gkmlpt/index",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, u := range pages {
		if _, err := e.c.Do(ctx, Request{URL: u, Purpose: model.PurposeIndex, Tier: TierBrowser}); err != nil {
			t.Logf("%s: %v", u, err) // a page may fail; what reached the site is judged below
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
	t.Logf("%d requests at the site", len(log))
}
