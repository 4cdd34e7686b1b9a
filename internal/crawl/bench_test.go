package crawl_test

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store/storetest"
)

// benchScale is the simulated web's size for BenchmarkCrawlWorld: three
// times the demo world.
const benchScale = 3

// BenchmarkCrawlWorld crawls the whole simulated web (seed 1, scale 3, the
// city portal left out: its browser tier runs in a separate Chromium
// process) into a fresh SQLite store at owned-host rates, and reports:
//
//   - cpu-s/1000articles: user+system CPU of this process during the crawl
//     per 1,000 articles stored. The simulated web serves from the same
//     process, so this includes the server side of every request: an upper
//     bound for the crawler alone.
//   - peak-heap-MB: the largest HeapInuse sampled every 5 ms during the crawl;
//     start-heap-MB is HeapInuse just before it (the sim's pages, the test
//     binary), so the crawl's own share is the difference.
//   - peak-rss-MB: the process's peak resident set (VmHWM) during the crawl,
//     reset before it where the kernel allows (/proc/self/clear_refs).
//   - articles: articles stored per crawl.
//
// Set-up (starting the sim, migrating, syncing the config) is not timed.
func BenchmarkCrawlWorld(b *testing.B) {
	ctx := context.Background()
	var cpuTotal float64
	var articles int
	var peakHeap, peakRSS, baseHeap uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st := storetest.SQLite(b)
		w := crawltest.NewWorld(b, st, crawltest.Options{ConfigDir: configDir, Sim: sim.Options{Seed: 1, Scale: benchScale}})
		targets := w.Targets(b, false)
		c := w.Crawler(nil)
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		baseHeap = max(baseHeap, m.HeapInuse)
		resetPeakRSS()
		stop := sampleHeap()
		before := cpuSeconds()
		b.StartTimer()

		results := c.Run(ctx, targets)

		b.StopTimer()
		cpuTotal += cpuSeconds() - before
		if h := stop(); h > peakHeap {
			peakHeap = h
		}
		if r := peakRSSBytes(); r > peakRSS {
			peakRSS = r
		}
		for _, r := range results {
			if r.Err != nil {
				b.Fatalf("target %s failed: %v", r.TargetCode, r.Err)
			}
			articles += r.Created + r.Updated
		}
		b.StartTimer()
	}
	if articles == 0 {
		b.Fatal("no articles stored")
	}
	b.ReportMetric(cpuTotal/(float64(articles)/1000), "cpu-s/1000articles")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(baseHeap)/(1<<20), "start-heap-MB")
	if peakRSS > 0 {
		b.ReportMetric(float64(peakRSS)/(1<<20), "peak-rss-MB")
	}
	b.ReportMetric(float64(articles)/float64(b.N), "articles")
}

// cpuSeconds is the user+system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// sampleHeap samples HeapInuse until the returned stop is called, which
// returns the largest value seen.
func sampleHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		return peak.Load()
	}
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: "5" to clear_refs);
// where that is refused the peak is the process's lifetime peak.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSBytes reads VmHWM from /proc/self/status; 0 where there is none.
func peakRSSBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
