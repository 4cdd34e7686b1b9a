package pdf

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"zhizhi/internal/pdf/pdftest"
)

// BenchmarkParseFixtures parses every fixture with OCR on and reports, per
// fixture, the time (ns/op), the peak memory of the largest tool run
// (tool-peak-MB) and the Go heap's peak while it ran (heap-peak-MB):
//
//	go test ./internal/pdf -run '^$' -bench ParseFixtures -benchtime 1x
func BenchmarkParseFixtures(b *testing.B) {
	pdftest.RequireTools(b, true)
	files, err := filepath.Glob("testdata/*.pdf")
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		data := fixture(b, filepath.Base(f))
		b.Run(strings.TrimSuffix(filepath.Base(f), ".pdf"), func(b *testing.B) {
			var toolPeak int64
			runtime.GC()
			stop := make(chan struct{})
			heapPeak := make(chan uint64)
			go func() { heapPeak <- sampleHeap(stop) }()
			for b.Loop() {
				r, err := Parse(context.Background(), data, Options{OCR: true})
				if err == nil {
					toolPeak = max(toolPeak, r.PeakRSS())
				} else if !isKind(err) {
					b.Fatalf("untyped error: %v", err)
				}
			}
			close(stop)
			b.ReportMetric(float64(toolPeak)/(1<<20), "tool-peak-MB")
			b.ReportMetric(float64(<-heapPeak)/(1<<20), "heap-peak-MB")
		})
	}
}

func sampleHeap(stop <-chan struct{}) uint64 {
	var peak uint64
	var ms runtime.MemStats
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}
