package neardup

import (
	"cmp"
	"math/bits"
	"slices"
	"sync"
)

// MaxDistance is the largest Hamming distance the tables answer; Query
// with a larger k falls back to reading every fingerprint.
const MaxDistance = 3

// defaultBuffer is how many online additions wait in an unsorted list,
// read in full by every query, before they become a segment of their own.
// A query reads 256 words in well under a microsecond, about what one
// table probe costs.
const defaultBuffer = 256

// Match is one stored fingerprint near a query.
type Match struct {
	ID       int64
	FP       uint64
	Distance int
}

// Index finds stored fingerprints within a small Hamming distance of a
// query. It is safe for concurrent use: any number of queries run together,
// and additions and removals take turns with each other. Make one with
// New or Build; the zero value is not ready for use.
type Index struct {
	// wmu makes writers take turns. A writer holds it while it builds new
	// segments, which it does without mu so that queries go on meanwhile:
	// segments are immutable apart from their deletion marks, and only the
	// writer holding wmu changes those.
	wmu sync.Mutex
	// mu guards what queries read: segs, buf, n and the deletion marks.
	mu sync.RWMutex

	layout *layout
	bufMax int
	segs   []*segment // oldest and largest first
	buf    []entry    // online additions not yet in a segment; ids unique
	n      int
}

// New returns an empty index.
func New() *Index {
	return newIndex(defaultLayout, defaultBuffer)
}

func newIndex(l *layout, bufMax int) *Index {
	return &Index{layout: l, bufMax: bufMax}
}

// Build loads an index in one go, as at start from the store: next yields
// each (id, fingerprint) until ok is false; n is only a size hint. The
// entries are sorted once and the tables filled by counting sort, with no
// insertion one by one. If an id comes twice, the later fingerprint wins.
func Build(n int, next func() (id int64, fp uint64, ok bool)) *Index {
	return build(defaultLayout, defaultBuffer, n, next)
}

func build(l *layout, bufMax, n int, next func() (int64, uint64, bool)) *Index {
	x := newIndex(l, bufMax)
	es := make([]entry, 0, max(n, 0))
	for {
		id, fp, ok := next()
		if !ok {
			break
		}
		es = append(es, entry{id, fp})
	}
	es = sortUnique(es)
	if len(es) > 0 {
		x.segs = []*segment{newSegment(l, es)}
	}
	x.n = len(es)
	return x
}

// sortUnique sorts es by id and keeps the last of each id. A store usually
// yields ids in order already, which costs one pass to see.
func sortUnique(es []entry) []entry {
	strictly := true
	for i := 1; i < len(es); i++ {
		if es[i-1].id >= es[i].id {
			strictly = false
			break
		}
	}
	if strictly {
		return es
	}
	// Sort with the arrival number as the tie-break, so the last of a run
	// of equal ids is the latest; a stable sort would move elements
	// O(n log² n) times.
	type seqEntry struct {
		entry
		seq int
	}
	tmp := make([]seqEntry, len(es))
	for i, e := range es {
		tmp[i] = seqEntry{e, i}
	}
	slices.SortFunc(tmp, func(a, b seqEntry) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.seq, b.seq))
	})
	out := es[:0]
	for i, e := range tmp {
		if i+1 < len(tmp) && tmp[i+1].id == e.id {
			continue
		}
		out = append(out, e.entry)
	}
	return out
}

// Add stores fp under id, replacing any fingerprint id had.
func (x *Index) Add(id int64, fp uint64) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	x.removeLocked(id)
	x.buf = append(x.buf, entry{id, fp})
	x.n++
	full := len(x.buf) >= x.bufMax
	x.mu.Unlock()
	if full {
		x.flush()
	}
}

// Remove forgets id; an id not stored is ignored.
func (x *Index) Remove(id int64) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	removed := x.removeLocked(id)
	x.mu.Unlock()
	if removed {
		x.compact()
	}
}

// removeLocked drops id wherever it is live; a live id is in one place only.
func (x *Index) removeLocked(id int64) bool {
	for i, e := range x.buf {
		if e.id == id {
			last := len(x.buf) - 1
			x.buf[i] = x.buf[last]
			x.buf = x.buf[:last]
			x.n--
			return true
		}
	}
	for _, s := range x.segs {
		if s.kill(id) {
			x.n--
			return true
		}
	}
	return false
}

// flush turns the buffer into a segment and merges the newest segments
// while the newer is at least half the size of the one before: each
// fingerprint is then copied O(log n) times over its life, never the whole
// index per insertion. Called with wmu held and mu not held.
func (x *Index) flush() {
	es := slices.Clone(x.buf)
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	segs := append(slices.Clone(x.segs), newSegment(x.layout, es))
	for len(segs) >= 2 {
		a, b := segs[len(segs)-2], segs[len(segs)-1]
		if a.live > 2*b.live {
			break
		}
		segs = append(segs[:len(segs)-2], merge(x.layout, a, b))
	}
	x.mu.Lock()
	x.segs = segs
	x.buf = x.buf[:0]
	x.mu.Unlock()
}

// compact rebuilds a segment once more than half of its slots are dead, so
// removals do not leave tables full of rows every query has to skip. The
// rebuild costs the segment's size and needs as many removals first.
// Called with wmu held and mu not held.
func (x *Index) compact() {
	var segs []*segment
	for i, s := range x.segs {
		if len(s.es) < x.bufMax || 2*s.live >= len(s.es) {
			continue
		}
		if segs == nil {
			segs = slices.Clone(x.segs)
		}
		segs[i] = nil
		if s.live > 0 {
			segs[i] = newSegment(x.layout, s.appendLive(make([]entry, 0, s.live)))
		}
	}
	if segs == nil {
		return
	}
	segs = slices.DeleteFunc(segs, func(s *segment) bool { return s == nil })
	x.mu.Lock()
	x.segs = segs
	x.mu.Unlock()
}

// merge builds one segment from the live entries of two; both are in id
// order and share no live id, so one pass merges them.
func merge(l *layout, a, b *segment) *segment {
	ea := a.appendLive(make([]entry, 0, a.live))
	eb := b.appendLive(make([]entry, 0, b.live))
	es := make([]entry, 0, len(ea)+len(eb))
	i, j := 0, 0
	for i < len(ea) && j < len(eb) {
		if ea[i].id < eb[j].id {
			es = append(es, ea[i])
			i++
		} else {
			es = append(es, eb[j])
			j++
		}
	}
	es = append(append(es, ea[i:]...), eb[j:]...)
	return newSegment(l, es)
}

// Query returns every stored fingerprint within Hamming distance k of fp,
// nearest first and by id among equals. Up to MaxDistance it probes the
// tables; a larger k reads every fingerprint, exact but slow. A negative k
// matches nothing.
func (x *Index) Query(fp uint64, k int) []Match {
	if k < 0 {
		return nil
	}
	var out []Match
	x.mu.RLock()
	for _, s := range x.segs {
		if k <= MaxDistance {
			out = s.probe(x.layout, fp, k, out)
		} else {
			out = s.scan(fp, k, out)
		}
	}
	for _, e := range x.buf {
		if d := bits.OnesCount64(e.fp ^ fp); d <= k {
			out = append(out, Match{ID: e.id, FP: e.fp, Distance: d})
		}
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	// A fingerprint close to the query sits in the probed bucket of several
	// tables; its copies are now side by side.
	return slices.CompactFunc(out, func(a, b Match) bool { return a.ID == b.ID })
}

// Len returns how many fingerprints the index holds.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}
