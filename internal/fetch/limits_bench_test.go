package fetch

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap samples the live heap while fn runs and returns its peak above
// the level before fn, in bytes.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	peak.Store(base)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	return peak.Load() - base
}

// BenchmarkHostileResponses measures what each hostile answer costs before
// its typed error: the gzip bomb (1 GiB inflated), a 50 MB body, a redirect
// loop and a hanging server, through the guard's client over loopback. It
// reports the peak heap above the starting level (peak-heap-MB), the number
// a crawler's memory budget must allow for.
func BenchmarkHostileResponses(b *testing.B) {
	g, _ := limitsServer(b)
	cases := []struct {
		name  string
		path  string
		l     Limits
		check func(error) bool
	}{
		{"gzip-bomb", "/bomb", Limits{MaxRawBytes: 20 << 20, MaxDecompressedBytes: 8 << 20, RequestTimeout: 30 * time.Second},
			func(err error) bool { var tl *ErrTooLarge; return errors.As(err, &tl) && tl.Kind == "decompressed" }},
		{"50MB-body", "/huge", Limits{MaxRawBytes: 10 << 20, MaxDecompressedBytes: 100 << 20, RequestTimeout: 30 * time.Second},
			func(err error) bool { var tl *ErrTooLarge; return errors.As(err, &tl) && tl.Kind == "raw" }},
		{"redirect-loop", "/loop", Limits{RequestTimeout: 30 * time.Second},
			func(err error) bool { return errors.Is(err, ErrTooManyRedirects) }},
		{"hang", "/hang", Limits{RequestTimeout: 50 * time.Millisecond},
			func(err error) bool { return errors.Is(err, ErrTimeout) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var worst uint64
			b.ReportAllocs()
			for b.Loop() {
				peak := peakHeap(func() {
					resp, err := get(b, g, context.Background(), c.path, c.l)
					if !c.check(err) {
						b.Fatalf("%s: err = %v (%+v), want its typed error", c.name, err, resp)
					}
				})
				worst = max(worst, peak)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MB")
		})
	}
}
