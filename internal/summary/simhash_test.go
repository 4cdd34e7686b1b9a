package summary

import (
	"slices"
	"strings"
	"testing"
)

func TestHamming(t *testing.T) {
	tests := []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0xdeadbeef, 0xdeadbeef, 0},
		{0, 1, 1},
		{1, 3, 1},
		{0, ^uint64(0), 64},
		{0x00ff00ff00ff00ff, 0xff00ff00ff00ff00, 64},
		{0xf0, 0x0f, 8},
	}
	for _, tt := range tests {
		if got := Hamming(tt.a, tt.b); got != tt.want {
			t.Errorf("Hamming(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTokens(t *testing.T) {
	var got []string
	forEachToken("加强耕地保护 ABC-123，中x Hello", func(s string) { got = append(got, s) })
	want := []string{"加强", "强耕", "耕地", "地保", "保护", "abc", "123", "中", "x", "hello"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

// longText is an article-length text of varied sentences.
func longText() string {
	var b strings.Builder
	topics := []string{"加强耕地保护", "优化营商环境", "推进数字政府改革建设", "促进就业创业", "乡村振兴"}
	verbs := []string{"各地各部门要高度重视%s工作，切实加强组织领导。", "到2027年，%s工作体系基本健全。", "加大财政资金统筹力度，对%s相关项目给予支持。", "建立健全%s工作协调机制，定期研究解决重大问题。"}
	for i := range 60 {
		b.WriteString(strings.ReplaceAll(verbs[i%len(verbs)], "%s", topics[(i/4)%len(topics)]))
		if i%3 == 2 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func TestSimhash(t *testing.T) {
	text := longText()
	if d := Hamming(Simhash(text), Simhash(text)); d != 0 {
		t.Errorf("identical texts at distance %d", d)
	}
	// One character changed in a 2,000-character text is still the same
	// article by the near-duplicate rule (distance ≤ 3).
	rs := []rune(text)
	for _, at := range []int{0, len(rs) / 3, len(rs) / 2, len(rs) - 2} {
		changed := append([]rune(nil), rs...)
		changed[at] = '改'
		if d := Hamming(Simhash(text), Simhash(string(changed))); d > 3 {
			t.Errorf("one character changed at %d: distance %d, want ≤ 3", at, d)
		}
	}
	// Unrelated texts land far apart: a random pair of 64-bit values differs
	// in 32 bits on average; unrelated texts must be well beyond both the
	// near-duplicate rule (3) and the relevance gate (20).
	unrelated := []string{
		text,
		strings.Repeat("清晨的北江两岸薄雾未散，沿岸的村民已经开始一天的劳作。夜幕降临，江边灯光次第亮起。", 20),
		strings.Repeat("The quick brown fox jumps over the lazy dog while the zhizhi crawler sleeps politely. ", 20),
		strings.Repeat("初步核算，全年全市地区生产总值2345亿元，比上年增长5.3%。年末常住人口420万人。", 20),
	}
	total, pairs := 0, 0
	for i := range unrelated {
		for j := i + 1; j < len(unrelated); j++ {
			d := Hamming(Simhash(unrelated[i]), Simhash(unrelated[j]))
			if d <= 20 {
				t.Errorf("unrelated texts %d and %d at distance %d, want > 20", i, j, d)
			}
			total += d
			pairs++
		}
	}
	t.Logf("unrelated texts: mean distance %.1f of 64", float64(total)/float64(pairs))
	if Simhash("") != 0 || Simhash("，。 \n") != 0 {
		t.Errorf("a text with no token hashes to %#x, %#x; want 0", Simhash(""), Simhash("，。 \n"))
	}
}

// TestSimhashIsStable pins the value of one text: stored simhashes are
// compared with new ones across processes, machines and releases, so the
// hash must never change silently (Go's map hash and maphash would). The
// value was computed by a separate implementation of the definition in the
// package doc (CJK bigrams, lower-cased words, FNV-1a 64 with murmur3's
// finalizer, a bit set where its votes are positive).
func TestSimhashIsStable(t *testing.T) {
	const want = uint64(0x61746e4528312592)
	if got := Simhash("清远市人民政府关于加强耕地保护的通知 2024"); got != want {
		t.Errorf("Simhash = %#016x, want %#016x", got, want)
	}
}
