package neardup

import (
	"cmp"
	"math/bits"
	"slices"
)

type entry struct {
	id int64
	fp uint64
}

// A segment is an immutable set of fingerprints with one bucketed table per
// layout table. Only its deletion marks change after it is built.
type segment struct {
	es   []entry  // ids ascending and unique, so Remove finds an id by binary search
	dead []uint64 // bit i set: slot i was removed or replaced
	live int

	tables []table
}

// table holds every slot of a segment ordered by the top dirBits of its
// permuted fingerprint. dir[b]..dir[b+1] are the rows whose permuted
// fingerprint starts with b; a probe reads one such run.
type table struct {
	dirBits uint
	dir     []uint32
	keys    []uint64 // permuted fingerprints, row by row
	slots   []uint32 // the segment slot of each row
}

// newSegment builds a segment from entries sorted by id with no id twice.
// The segment keeps es itself, so the caller must not use it afterwards.
func newSegment(l *layout, es []entry) *segment {
	s := &segment{
		es:     es,
		dead:   make([]uint64, (len(es)+63)/64),
		live:   len(es),
		tables: make([]table, len(l.tables)),
	}
	for t := range l.tables {
		s.tables[t] = buildTable(l, t, es)
	}
	return s
}

// dirBitsFor sizes a table's directory: two to four rows per bucket,
// which keeps the directory at one or two bytes per fingerprint and a
// bucket within a cache line or two. It never takes more bits than the
// table's key: only the key's blocks are sure to be equal in a query and
// its neighbour, and a bit beyond them would send the query to a bucket
// its neighbour may not be in.
func dirBitsFor(n int, keyBits uint) uint {
	d := uint(0)
	if n > 4 {
		d = uint(bits.Len(uint(n))) - 2
	}
	return min(d, keyBits)
}

// buildTable places the fingerprints by a counting sort on their leading
// bits: two passes over the data, no comparison sort, O(n + 2^dirBits).
// Rows inside a bucket stay in slot order; a probe reads the whole bucket
// and checks each row's full distance, so no finer order would help.
func buildTable(l *layout, t int, es []entry) table {
	d := dirBitsFor(len(es), l.tables[t].keyBits)
	tb := table{
		dirBits: d,
		dir:     make([]uint32, 1<<d+1),
		keys:    make([]uint64, len(es)),
		slots:   make([]uint32, len(es)),
	}
	for _, e := range es {
		tb.dir[tb.bucket(l.permute(t, e.fp))+1]++
	}
	for b := 1; b < len(tb.dir); b++ {
		tb.dir[b] += tb.dir[b-1]
	}
	next := slices.Clone(tb.dir[:len(tb.dir)-1])
	for slot, e := range es {
		p := l.permute(t, e.fp)
		b := tb.bucket(p)
		tb.keys[next[b]] = p
		tb.slots[next[b]] = uint32(slot)
		next[b]++
	}
	return tb
}

func (tb *table) bucket(p uint64) uint64 {
	if tb.dirBits == 0 {
		return 0
	}
	return p >> (64 - tb.dirBits)
}

func (s *segment) isDead(slot uint32) bool {
	return s.dead[slot/64]&(1<<(slot%64)) != 0
}

// kill marks id's slot dead and reports whether id was live here.
func (s *segment) kill(id int64) bool {
	i, ok := slices.BinarySearchFunc(s.es, id, func(e entry, id int64) int { return cmp.Compare(e.id, id) })
	if !ok || s.isDead(uint32(i)) {
		return false
	}
	s.dead[i/64] |= 1 << (i % 64)
	s.live--
	return true
}

// appendLive appends the segment's live entries in id order.
func (s *segment) appendLive(out []entry) []entry {
	for i, e := range s.es {
		if !s.isDead(uint32(i)) {
			out = append(out, e)
		}
	}
	return out
}

// probe appends the live fingerprints within distance k of fp, looking
// only at the bucket of fp's leading bits in each table.
func (s *segment) probe(l *layout, fp uint64, k int, out []Match) []Match {
	for t := range s.tables {
		tb := &s.tables[t]
		p := l.permute(t, fp)
		b := tb.bucket(p)
		lo, hi := tb.dir[b], tb.dir[b+1]
		keys := tb.keys[lo:hi]
		for r, key := range keys {
			d := bits.OnesCount64(key ^ p)
			if d > k {
				continue
			}
			slot := tb.slots[int(lo)+r]
			if s.isDead(slot) {
				continue
			}
			e := s.es[slot]
			out = append(out, Match{ID: e.id, FP: e.fp, Distance: d})
		}
	}
	return out
}

// scan appends every live fingerprint within distance k of fp, reading
// them all; it serves distances the tables cannot answer.
func (s *segment) scan(fp uint64, k int, out []Match) []Match {
	for i, e := range s.es {
		if d := bits.OnesCount64(e.fp ^ fp); d <= k && !s.isDead(uint32(i)) {
			out = append(out, Match{ID: e.id, FP: e.fp, Distance: d})
		}
	}
	return out
}
