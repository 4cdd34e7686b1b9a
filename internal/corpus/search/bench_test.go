//go:build unix

package search

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// benchVersion names the cached benchmark index; change it whenever the
// generator or the file format changes.
const benchVersion = formatVersion + "-gen1-100k"

const benchDocs = 100_000

// benchIndex returns the 100,000-document benchmark index, building it
// under os.TempDir() the first time (bodies of 1,000–3,000 runes).
func benchIndex(b *testing.B) (*Index, string) {
	b.Helper()
	path := filepath.Join(os.TempDir(), "zhizhi-search-bench-"+sanitize(benchVersion)+".sqlite")
	statsPath := path + ".build.txt"
	if _, err := os.Stat(path); err != nil {
		r := rand.New(rand.NewPCG(100, 0x5eed))
		i := 0
		next := func() (*Doc, error) {
			if i == benchDocs {
				return nil, io.EOF
			}
			i++
			return genDoc(r, i-1, 2000), nil
		}
		b.Logf("building the %d-document index at %s (once) …", benchDocs, path)
		st, err := Build(context.Background(), path, next)
		if err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf("docs=%d text_runes=%d file_bytes=%d build=%s load=%s", st.Docs, st.TextRunes, st.FileBytes,
			st.Elapsed.Round(time.Second), st.Load.Round(time.Second))
		os.WriteFile(statsPath, []byte(line+"\n"), 0o644)
	}
	x, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	stats, _ := os.ReadFile(statsPath)
	return x, string(stats)
}

func sanitize(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			out[i] = '-'
		}
	}
	return string(out)
}

func BenchmarkSearch100k(b *testing.B) {
	x, stats := benchIndex(b)
	defer x.Close()
	b.Logf("index: %s", stats)
	// 文号 of the first documents the generator made (same seed, same order).
	r := rand.New(rand.NewPCG(100, 0x5eed))
	var docNos []string
	for i := 0; len(docNos) < 20; i++ {
		if d := genDoc(r, i, 2000); d.DocNo != "" && i%7 == 0 {
			docNos = append(docNos, d.DocNo)
		}
	}
	for _, c := range []struct {
		name string
		qs   []string
	}{
		// Single characters from rare (粮) to in nearly every document (作).
		{"1char", []string{"粮", "储", "医", "养", "耕", "汛", "污", "贸", "审", "港", "工", "作"}},
		{"2char", []string{"乡村", "教育", "安全", "财政", "改革", "数字", "生态", "就业", "养老", "港口", "工作", "政府"}},
		{"4char", []string{"优化营商", "乡村振兴", "政务服务", "一网通办", "生态环境", "安全生产", "人才引进", "城市更新"}},
		{"docno", docNos},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			hits := 0
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				res, err := x.Search(ctx, Query{Text: c.qs[i%len(c.qs)]})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				hits += res.Total
			}
			cpu := cpuTime() - cpu0
			slices.Sort(lat)
			ms := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.95), "p95-ms")
			b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
			// On a shared machine wall time says as much about the neighbours
			// as about the search; processor time per query does not.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
		})
	}
}

// cpuTime is the processor time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
