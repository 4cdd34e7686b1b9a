package fetch

import (
	"context"
	"testing"
	"time"
)

// BenchmarkClientOwnedHost measures requests per second through the whole
// stack (guard, robots, breaker, limiter, url_state, crawl_log on SQLite)
// to an owned sim host whose limiter is opened wide, on the real clock.
// B/op includes the in-process sim, whose gzip writer dominates it.
func BenchmarkClientOwnedHost(b *testing.B) {
	e := newSimEnv(b, 1, ClientOptions{})
	c := e.client(b, ClientOptions{Clock: RealClock{}})
	c.SetSitePolicy(qingcheng, SitePolicy{RespectRobots: true, Owned: true, Interval: time.Microsecond, Burst: 1000})
	u := truthURL(b, e.w, qingcheng, "/")
	ctx := context.Background()
	if _, err := c.Do(ctx, Request{URL: u}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Do(ctx, Request{URL: u}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
