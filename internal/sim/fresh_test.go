package sim

import (
	"testing"
	"time"
)

// TestCadenceColumnsAreFreshAtTheStart: a world started at any moment has
// every column that publishes on a cadence with its newest article less
// than one cadence old, so a fresh demo is not reported stale; and the
// pinned sample article of every column keeps the URL it has at the fixed
// clock (the bundled configuration names it), also in a world started
// later.
func TestCadenceColumnsAreFreshAtTheStart(t *testing.T) {
	later := time.Date(2027, 3, 14, 15, 9, 0, 0, shanghai)
	for _, now := range []time.Time{DefaultNow, later} {
		w := newWorld(Options{Seed: 1, Now: now, Scale: 1})
		for _, s := range w.sites {
			for _, c := range s.columns {
				if !c.isLeaf() || c.Cadence <= 0 || len(c.articles) == 0 {
					continue
				}
				newest := c.articles[0].Published
				if age := now.Sub(newest); age < 0 || age >= c.Cadence {
					t.Errorf("world at %v: %s column %s (a new article every %v) has its newest from %v, %v before the clock",
						now, s.Code, c.ID, c.Cadence, newest, age)
				}
			}
		}
	}
	pinned := func(now time.Time) map[string]bool {
		w := newWorld(Options{Seed: 1, Now: now, Scale: 1})
		paths := map[string]bool{}
		for _, s := range w.sites {
			for _, a := range s.allArticles() {
				if a.ID <= s.idBase+100 {
					paths[s.Host+a.Path] = true
				}
			}
		}
		return paths
	}
	at, after := pinned(DefaultNow), pinned(later)
	if len(at) == 0 {
		t.Fatal("no pinned articles")
	}
	for p := range at {
		if !after[p] {
			t.Errorf("pinned article %s is not at the same URL in a world started at %v", p, later)
		}
	}
}
