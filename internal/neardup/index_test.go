package neardup

import (
	"cmp"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// model is the reference: a plain map read by a linear scan.
type model map[int64]uint64

func (m model) query(fp uint64, k int) []Match {
	var out []Match
	for id, f := range m {
		if d := bits.OnesCount64(f ^ fp); d <= k {
			out = append(out, Match{ID: id, FP: f, Distance: d})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// flip returns fp with d distinct random bits inverted.
func flip(r *rand.Rand, fp uint64, d int) uint64 {
	for _, b := range r.Perm(64)[:d] {
		fp ^= 1 << b
	}
	return fp
}

func sameMatches(got, want []Match) bool {
	return len(got) == len(want) && (len(got) == 0 || slices.Equal(got, want))
}

func buildFrom(l *layout, bufMax int, es []entry) *Index {
	i := 0
	return build(l, bufMax, len(es), func() (int64, uint64, bool) {
		if i == len(es) {
			return 0, 0, false
		}
		i++
		return es[i-1].id, es[i-1].fp, true
	})
}

var layouts = []*layout{&layout4, &layout5, &layout6}

// Every fingerprint at distance 1, 2 or 3 from a stored one must find it,
// whichever blocks the differing bits fall in; at distance 4 it must not
// come back for k=3. The stored set is large enough that each table's
// directory uses its full key.
func TestEveryFlipWithinThreeIsFound(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(l.tables))))
			es := make([]entry, 1<<18)
			for i := range es {
				es[i] = entry{int64(i), r.Uint64()}
			}
			const target = 4242
			x := buildFrom(l, defaultBuffer, es)
			stored := es[target].fp

			check := func(q uint64, want int) {
				t.Helper()
				for _, m := range x.Query(q, 3) {
					if m.ID == target {
						if want > 3 {
							t.Fatalf("query %016x at distance %d returned the stored fingerprint for k=3", q, want)
						}
						if m.Distance != want {
							t.Fatalf("query %016x: distance %d, want %d", q, m.Distance, want)
						}
						return
					}
				}
				if want <= 3 {
					t.Fatalf("query %016x at distance %d: stored fingerprint not found", q, want)
				}
			}
			check(stored, 0)
			for a := range 64 {
				check(stored^1<<a, 1)
				for b := a + 1; b < 64; b++ {
					check(stored^1<<a^1<<b, 2)
					for c := b + 1; c < 64; c++ {
						check(stored^1<<a^1<<b^1<<c, 3)
					}
				}
			}
			for range 20000 {
				check(flip(r, stored, 4), 4)
			}
		})
	}
}

// The index answers exactly what a linear scan answers, through a bulk
// load followed by interleaved additions, replacements and removals, with
// neighbours planted at distances 0 to 4 of the queries.
func TestQueryMatchesLinearScan(t *testing.T) {
	type scenario struct {
		name      string
		layout    *layout
		bufMax    int
		clustered bool // fingerprints crowd around a few centres, so buckets are full
	}
	var scenarios []scenario
	for _, l := range layouts {
		for _, buf := range []int{defaultBuffer, 3} {
			for _, cl := range []bool{false, true} {
				scenarios = append(scenarios, scenario{
					name:   fmt.Sprintf("%s/buffer=%d/clustered=%v", l.name, buf, cl),
					layout: l, bufMax: buf, clustered: cl,
				})
			}
		}
	}
	for si, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(si), 7))
			hubs := make([]uint64, 16)
			for i := range hubs {
				hubs[i] = r.Uint64()
			}
			fresh := func() uint64 {
				if sc.clustered {
					return flip(r, hubs[r.IntN(len(hubs))], r.IntN(8))
				}
				return r.Uint64()
			}
			m := model{}
			var es []entry
			nextID := int64(1)
			for range 4000 {
				es = append(es, entry{nextID, fresh()})
				m[nextID] = es[len(es)-1].fp
				nextID++
			}
			// Planted neighbours of every hub at each distance 0..4, two of
			// each, so duplicates with different ids are there from the start.
			for _, h := range hubs {
				for d := range 5 {
					for range 2 {
						es = append(es, entry{nextID, flip(r, h, d)})
						m[nextID] = es[len(es)-1].fp
						nextID++
					}
				}
			}
			r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			x := buildFrom(sc.layout, sc.bufMax, es)

			anyID := func() int64 {
				for {
					id := 1 + r.Int64N(nextID-1)
					if _, ok := m[id]; ok {
						return id
					}
				}
			}
			queries := 0
			checkQuery := func() {
				t.Helper()
				var q uint64
				switch r.IntN(3) {
				case 0:
					q = hubs[r.IntN(len(hubs))]
				case 1:
					q = flip(r, m[anyID()], r.IntN(5))
				default:
					q = r.Uint64()
				}
				all := m.query(q, 5)
				for k := range 6 {
					want := slices.DeleteFunc(slices.Clone(all), func(w Match) bool { return w.Distance > k })
					got := x.Query(q, k)
					if !sameMatches(got, want) {
						t.Fatalf("after %d queries, Query(%016x, %d):\n got  %v\n want %v", queries, q, k, got, want)
					}
					if k == 3 {
						for _, g := range got {
							if g.Distance > 3 {
								t.Fatalf("Query(%016x, 3) returned %v at distance %d", q, g.ID, g.Distance)
							}
						}
					}
				}
				queries++
			}
			for i := range 4000 {
				switch p := r.IntN(100); {
				case p < 35:
					var fp uint64
					if r.IntN(2) == 0 {
						fp = flip(r, hubs[r.IntN(len(hubs))], r.IntN(5))
					} else {
						fp = fresh()
					}
					x.Add(nextID, fp)
					m[nextID] = fp
					nextID++
				case p < 50:
					id, fp := anyID(), flip(r, hubs[r.IntN(len(hubs))], r.IntN(5))
					x.Add(id, fp)
					m[id] = fp
				case p < 70:
					id := anyID()
					x.Remove(id)
					delete(m, id)
				case p < 75:
					x.Remove(nextID + 1000) // never stored
				default:
					checkQuery()
				}
				if x.Len() != len(m) {
					t.Fatalf("after op %d Len() = %d, want %d", i, x.Len(), len(m))
				}
			}
			if queries == 0 {
				t.Fatal("no query was checked")
			}
		})
	}
}

func TestEdgeCases(t *testing.T) {
	const fp = 0xF00DFACE12345678
	t.Run("empty index", func(t *testing.T) {
		for name, x := range map[string]*Index{
			"New":   New(),
			"Build": Build(0, func() (int64, uint64, bool) { return 0, 0, false }),
		} {
			x.Remove(1)
			if got := x.Query(fp, 3); len(got) != 0 {
				t.Errorf("%s: Query on empty index = %v", name, got)
			}
			if x.Len() != 0 {
				t.Errorf("%s: Len() = %d, want 0", name, x.Len())
			}
		}
	})
	t.Run("duplicate fingerprints with different ids", func(t *testing.T) {
		x := buildFrom(defaultLayout, defaultBuffer, []entry{{9, fp}, {3, fp}, {5, fp ^ 1}})
		x.Add(7, fp)
		want := []Match{{3, fp, 0}, {7, fp, 0}, {9, fp, 0}, {5, fp ^ 1, 1}}
		if got := x.Query(fp, 3); !slices.Equal(got, want) {
			t.Errorf("Query = %v, want %v", got, want)
		}
		x.Remove(9)
		want = []Match{{3, fp, 0}, {7, fp, 0}, {5, fp ^ 1, 1}}
		if got := x.Query(fp, 3); !slices.Equal(got, want) {
			t.Errorf("after Remove(9) Query = %v, want %v", got, want)
		}
	})
	t.Run("re-added id replaces its fingerprint", func(t *testing.T) {
		far := ^uint64(fp) // 64 bits away
		// Where the old fingerprint lives: the loaded segment, the buffer,
		// or a segment the buffer was flushed into.
		for _, where := range []string{"loaded", "buffer", "flushed"} {
			var x *Index
			switch where {
			case "loaded":
				x = buildFrom(defaultLayout, 4, []entry{{1, fp}, {2, 77}})
			case "buffer":
				x = newIndex(defaultLayout, 4)
				x.Add(1, fp)
			case "flushed":
				x = newIndex(defaultLayout, 4)
				for id := int64(1); id <= 4; id++ {
					x.Add(id, uint64(id)<<40|fp)
				}
				x.Add(1, fp) // id 1 now in the buffer, its flushed copy dead
				x.Add(5, 5)
				x.Add(6, 6)
			}
			n := x.Len()
			x.Add(1, far)
			if x.Len() != n {
				t.Errorf("%s: Len() %d after re-adding id 1, want %d", where, x.Len(), n)
			}
			for _, m := range x.Query(fp, 3) {
				if m.ID == 1 {
					t.Errorf("%s: old fingerprint of id 1 still found: %v", where, m)
				}
			}
			if got := x.Query(far, 0); !slices.Equal(got, []Match{{1, far, 0}}) {
				t.Errorf("%s: Query(new fingerprint) = %v, want id 1 alone", where, got)
			}
		}
	})
	t.Run("Build keeps the later of a repeated id", func(t *testing.T) {
		x := buildFrom(defaultLayout, defaultBuffer, []entry{{2, 100}, {1, fp}, {2, fp}})
		if x.Len() != 2 {
			t.Errorf("Len() = %d, want 2", x.Len())
		}
		want := []Match{{1, fp, 0}, {2, fp, 0}}
		if got := x.Query(fp, 0); !slices.Equal(got, want) {
			t.Errorf("Query = %v, want %v", got, want)
		}
	})
	t.Run("negative k", func(t *testing.T) {
		x := buildFrom(defaultLayout, defaultBuffer, []entry{{1, fp}})
		if got := x.Query(fp, -1); len(got) != 0 {
			t.Errorf("Query(fp, -1) = %v, want none", got)
		}
	})
}

// Online additions go to small segments: a load of 10,000 fingerprints is
// not copied while fewer than half as many are added after it, and is
// merged with them once more arrive.
func TestAddLeavesLoadedSegmentAlone(t *testing.T) {
	es := make([]entry, 10000)
	for i := range es {
		es[i] = entry{int64(i), uint64(i) * 0x9E3779B97F4A7C15}
	}
	x := buildFrom(defaultLayout, 16, es)
	loaded := x.segs[0]
	for i := range 4000 {
		x.Add(int64(100000+i), uint64(i)*0xBF58476D1CE4E5B9)
	}
	if x.segs[0] != loaded {
		t.Fatal("adding 4,000 fingerprints to a load of 10,000 rebuilt the loaded segment")
	}
	if len(x.segs) > 12 {
		t.Fatalf("4,000 additions left %d segments", len(x.segs))
	}
	for i := range 8000 {
		x.Add(int64(200000+i), uint64(i)*0x94D049BB133111EB)
	}
	if x.segs[0] == loaded {
		t.Fatal("12,000 additions to a load of 10,000 never merged into it")
	}
}

// Removing more than half of a segment rebuilds it without the dead rows.
func TestRemoveCompacts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	es := make([]entry, 1000)
	m := model{}
	for i := range es {
		es[i] = entry{int64(i), r.Uint64()}
		m[int64(i)] = es[i].fp
	}
	x := buildFrom(defaultLayout, defaultBuffer, es)
	for i := range 500 {
		x.Remove(int64(i))
		delete(m, int64(i))
	}
	if len(x.segs) != 1 || len(x.segs[0].es) != 1000 {
		t.Fatalf("half removed: segments %d, first holds %d rows, want the load of 1,000 untouched", len(x.segs), len(x.segs[0].es))
	}
	x.Remove(500)
	delete(m, 500)
	if len(x.segs) != 1 || len(x.segs[0].es) != 499 {
		t.Fatalf("501 of 1,000 removed: segments %d, first holds %d rows, want one of 499", len(x.segs), len(x.segs[0].es))
	}
	for _, e := range es {
		if got, want := x.Query(e.fp, 3), m.query(e.fp, 3); !sameMatches(got, want) {
			t.Fatalf("Query(%016x) = %v, want %v", e.fp, got, want)
		}
	}
}

// Queries run while one writer adds, replaces and removes: fingerprints
// that stay stored are found every time, at the right distance. Run with
// -race.
func TestConcurrentQueriesAndWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	stable := make([]entry, 5000)
	for i := range stable {
		stable[i] = entry{int64(i), r.Uint64()}
	}
	x := buildFrom(defaultLayout, 8, stable)

	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(g), 11))
			for n := 0; ; n++ {
				select {
				case <-done:
					if n == 0 {
						errs <- fmt.Errorf("reader %d ran no query", g)
					}
					return
				default:
				}
				e := stable[rr.IntN(len(stable))]
				d := rr.IntN(4)
				q := flip(rr, e.fp, d)
				found := false
				for _, m := range x.Query(q, 3) {
					if m.Distance != bits.OnesCount64(m.FP^q) || m.Distance > 3 {
						errs <- fmt.Errorf("match %v for query %016x has a wrong distance", m, q)
						return
					}
					if m.ID == e.id {
						found = m.Distance == d && m.FP == e.fp
					}
				}
				if !found {
					errs <- fmt.Errorf("stable id %d not found at distance %d", e.id, d)
					return
				}
			}
		}()
	}
	// The writer touches ids of its own, near the stable ones so they share
	// buckets, and churns enough to flush, merge and compact many times.
	for i := range 20000 {
		id := int64(100000 + r.IntN(3000))
		if r.IntN(3) == 0 {
			x.Remove(id)
		} else {
			x.Add(id, flip(r, stable[r.IntN(len(stable))].fp, r.IntN(4)))
		}
		if i%5000 == 0 {
			x.Len()
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
