package neardup

import (
	"cmp"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// corpus is a set of random fingerprints with ids 1..n in order, as a store
// loader reading by id yields them, and a fixed set of queries: even ones
// are a stored fingerprint with 1 to 3 bits flipped (a planted neighbour),
// odd ones are random (almost surely nothing within distance 3).
type corpus struct {
	ids     []int64
	fps     []uint64
	queries []uint64
	planted []int64 // planted[i] is the id query i was made from, 0 for none
}

var (
	corpora   = map[int]*corpus{}
	corporaMu sync.Mutex
)

func getCorpus(n int) *corpus {
	corporaMu.Lock()
	defer corporaMu.Unlock()
	if c, ok := corpora[n]; ok {
		return c
	}
	r := rand.New(rand.NewPCG(uint64(n), 42))
	c := &corpus{ids: make([]int64, n), fps: make([]uint64, n)}
	for i := range n {
		c.ids[i], c.fps[i] = int64(i+1), r.Uint64()
	}
	for i := range 10000 {
		if i%2 == 0 {
			j := r.IntN(n)
			c.queries = append(c.queries, flip(r, c.fps[j], 1+r.IntN(3)))
			c.planted = append(c.planted, c.ids[j])
		} else {
			c.queries = append(c.queries, r.Uint64())
			c.planted = append(c.planted, 0)
		}
	}
	corpora[n] = c
	return c
}

func (c *corpus) build(l *layout) *Index {
	i := 0
	return build(l, defaultBuffer, len(c.ids), func() (int64, uint64, bool) {
		if i == len(c.ids) {
			return 0, 0, false
		}
		i++
		return c.ids[i-1], c.fps[i-1], true
	})
}

// linearScan is the baseline: read every fingerprint.
func (c *corpus) linearScan(q uint64, k int) []Match {
	var out []Match
	for i, fp := range c.fps {
		if d := bits.OnesCount64(fp ^ q); d <= k {
			out = append(out, Match{ID: c.ids[i], FP: fp, Distance: d})
		}
	}
	return out
}

var benchSizes = []struct {
	name string
	n    int
}{{"1M", 1_000_000}, {"10M", 10_000_000}}

var sink int

func BenchmarkQuery(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			c := getCorpus(sz.n)
			x := c.build(defaultLayout)
			i := 0
			for b.Loop() {
				sink += len(x.Query(c.queries[i%len(c.queries)], MaxDistance))
				i++
			}
		})
	}
}

func BenchmarkLinearScan(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			c := getCorpus(sz.n)
			i := 0
			for b.Loop() {
				sink += len(c.linearScan(c.queries[i%len(c.queries)], MaxDistance))
				i++
			}
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			c := getCorpus(sz.n)
			for b.Loop() {
				sink += c.build(defaultLayout).Len()
			}
		})
	}
}

// BenchmarkAdd measures online insertion into a loaded index of 1M,
// flushes and merges of the small segments included.
func BenchmarkAdd(b *testing.B) {
	c := getCorpus(1_000_000)
	x := c.build(defaultLayout)
	r := rand.New(rand.NewPCG(9, 9))
	id := int64(len(c.ids))
	for b.Loop() {
		id++
		x.Add(id, r.Uint64())
	}
}

// TestNearDupLatencyReport measures what the benchmarks cannot show: the
// latency distribution per query, the heap the index holds and its build
// time, for every layout beside a linear scan. It runs only when asked:
//
//	NEARDUP_BENCH=1 go test ./internal/neardup -run TestNearDupLatencyReport -v -timeout 60m
//
// NEARDUP_BENCH_SIZES (default "1000000,10000000") picks the sizes.
func TestNearDupLatencyReport(t *testing.T) {
	if os.Getenv("NEARDUP_BENCH") != "1" {
		t.Skip("set NEARDUP_BENCH=1 to measure query latency and memory")
	}
	sizes := []int{1_000_000, 10_000_000}
	if s := os.Getenv("NEARDUP_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("NEARDUP_BENCH_SIZES: %q is not a positive count", f)
			}
			sizes = append(sizes, n)
		}
	}
	linearQueries := 1000
	if s := os.Getenv("NEARDUP_BENCH_LINEAR"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("NEARDUP_BENCH_LINEAR: %q is not a positive count", s)
		}
		linearQueries = n
	}

	var report strings.Builder
	fmt.Fprintf(&report, "\n| fingerprints | method | build (wall) | build (CPU) | heap | bytes/fp | rows read/query | p50 | p99 | mean | p50 vs scan |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range sizes {
		c := getCorpus(n)
		type method struct {
			name      string
			x         *Index // nil: the linear scan
			wall, cpu time.Duration
			heap      uint64
			rows      int
			lat       []time.Duration
		}
		ms := []*method{{name: fmt.Sprintf("linear scan (%d queries)", min(linearQueries, len(c.queries))), heap: uint64(n) * 16, rows: n}}
		for _, l := range layouts {
			before := heapAlloc()
			cpu0, start := cpuTime(), time.Now()
			x := c.build(l)
			m := &method{name: l.name, x: x, wall: time.Since(start), cpu: cpuTime() - cpu0}
			m.heap = heapAlloc() - before
			ms = append(ms, m)
		}
		// The methods answer each query in turn, in a rotating order, so a
		// burst of load from other processes falls on all of them alike.
		for i, q := range c.queries {
			var want []Match
			for j := range ms {
				m := ms[(i+j)%len(ms)]
				if m.x == nil {
					if i >= linearQueries {
						continue
					}
					start := time.Now()
					want = c.linearScan(q, MaxDistance)
					m.lat = append(m.lat, time.Since(start))
					continue
				}
				start := time.Now()
				got := m.x.Query(q, MaxDistance)
				m.lat = append(m.lat, time.Since(start))
				if p := c.planted[i]; p != 0 && !slices.ContainsFunc(got, func(g Match) bool { return g.ID == p }) {
					t.Fatalf("%s, %d: query %d missed its planted neighbour %d", m.name, n, i, p)
				}
				m.rows += rowsRead(m.x, q)
			}
			if i < linearQueries {
				for _, m := range ms[1:] {
					if got := m.x.Query(q, MaxDistance); !sameMatches(got, sortedMatches(want)) {
						t.Fatalf("%s, %d: query %d found %v, the linear scan %v", m.name, n, i, got, want)
					}
				}
			}
		}
		linP50, _, _ := percentiles(ms[0].lat)
		for _, m := range ms {
			p50, p99, mean := percentiles(m.lat)
			build, buildCPU, rows := "–", "–", m.rows
			if m.x != nil {
				build = fmt.Sprintf("%.2f s", m.wall.Seconds())
				buildCPU = fmt.Sprintf("%.2f s", m.cpu.Seconds())
				rows = m.rows / len(m.lat)
			}
			fmt.Fprintf(&report, "| %s | %s | %s | %s | %s | %.1f | %d | %s | %s | %s | 1/%.0f |\n",
				count(n), m.name, build, buildCPU, mib(m.heap), float64(m.heap)/float64(n),
				rows, p50, p99, mean, float64(linP50)/float64(p50))
		}
		for _, m := range ms {
			runtime.KeepAlive(m.x)
		}
		corporaMu.Lock()
		delete(corpora, n)
		corporaMu.Unlock()
	}
	t.Log(report.String())
}

func sortedMatches(ms []Match) []Match {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b Match) int {
		if a.Distance != b.Distance {
			return a.Distance - b.Distance
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return s
}

// rowsRead is how many table rows a query at distance 3 reads: the
// candidates whose full distance is checked.
func rowsRead(x *Index, q uint64) int {
	n := len(x.buf)
	for _, s := range x.segs {
		for t := range s.tables {
			tb := &s.tables[t]
			b := tb.bucket(x.layout.permute(t, q))
			n += int(tb.dir[b+1] - tb.dir[b])
		}
	}
	return n
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func percentiles(ds []time.Duration) (p50, p99, mean time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return s[len(s)*50/100], s[len(s)*99/100], sum / time.Duration(len(s))
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func count(n int) string {
	if n%1_000_000 == 0 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return strconv.Itoa(n)
}
