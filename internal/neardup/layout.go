package neardup

import "fmt"

// A layout splits the 64 bits into blocks and lists the tables: each table
// moves len(blocks)-k chosen blocks to the top of the word, so two
// fingerprints that agree on those blocks share the table's leading keyBits.
type layout struct {
	name   string
	blocks []block
	tables []tableSpec
}

// block is a run of bits, shift counted from bit 0 (least significant).
type block struct {
	shift uint
	width uint
}

type tableSpec struct {
	order   []int // block indices: the leading ones first, then the rest in word order
	keyBits uint  // width of the leading blocks together
}

// newLayout splits 64 bits into blocks of the given widths (most significant
// first) and makes one table for every choice of len(widths)-k leading blocks.
// By pigeonhole, k differing bits fall in at most k blocks, so two
// fingerprints within distance k agree on all of some len(widths)-k blocks:
// one table has them side by side under the same leading bits.
func newLayout(name string, widths []uint, k int) layout {
	var sum uint
	for _, w := range widths {
		sum += w
	}
	if sum != 64 || k < 0 || k >= len(widths) {
		panic(fmt.Sprintf("neardup: bad layout %v for k=%d", widths, k))
	}
	l := layout{name: name}
	pos := uint(64)
	for _, w := range widths {
		pos -= w
		l.blocks = append(l.blocks, block{shift: pos, width: w})
	}
	lead := len(widths) - k
	for _, chosen := range combinations(len(widths), lead) {
		spec := tableSpec{order: append([]int(nil), chosen...)}
		in := make([]bool, len(widths))
		for _, b := range chosen {
			in[b] = true
			spec.keyBits += widths[b]
		}
		for b := range widths {
			if !in[b] {
				spec.order = append(spec.order, b)
			}
		}
		l.tables = append(l.tables, spec)
	}
	return l
}

// combinations lists every r-subset of 0..n-1 in increasing order.
func combinations(n, r int) [][]int {
	var out [][]int
	cur := make([]int, 0, r)
	var walk func(from int)
	walk = func(from int) {
		if len(cur) == r {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := from; i <= n-(r-len(cur)); i++ {
			cur = append(cur, i)
			walk(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	walk(0)
	return out
}

// permute rearranges fp's blocks into the table's order. A permutation of
// bits keeps Hamming distances, so candidates are checked on permuted words
// and never need to be turned back.
func (l *layout) permute(t int, fp uint64) uint64 {
	var out uint64
	pos := uint(64)
	for _, b := range l.tables[t].order {
		blk := l.blocks[b]
		pos -= blk.width
		out |= (fp >> blk.shift & (1<<blk.width - 1)) << pos
	}
	return out
}

// The layouts the benchmarks compare; defaultLayout is the one New uses.
var (
	layout4 = newLayout("4 blocks of 16, 4 tables", []uint{16, 16, 16, 16}, MaxDistance)
	layout5 = newLayout("5 blocks of 13/12, 10 tables", []uint{13, 13, 13, 13, 12}, MaxDistance)
	layout6 = newLayout("6 blocks of 11/10, 20 tables", []uint{11, 11, 11, 11, 10, 10}, MaxDistance)

	defaultLayout = &layout4
)
