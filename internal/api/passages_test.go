package api

import (
	"slices"
	"strings"
	"testing"
)

// TestPassages holds the export's passage rule to its documented cases:
// paragraphs packed up to 500 characters, a longer paragraph cut after a
// sentence end in the second half of the window, else at 500, white space
// at the edges left out.
func TestPassages(t *testing.T) {
	r := strings.Repeat
	cases := []struct {
		name string
		text string
		want []passageSpan
	}{
		{"empty", "", nil},
		{"only white space", "  \n\n\u3000 \n", nil},
		{"two short paragraphs are one passage", "第一段。\n第二段。", []passageSpan{{0, 9}}},
		{"edges trimmed", "\u3000\u3000第一段\n", []passageSpan{{2, 5}}},
		{"packed while within 500", r("甲", 200) + "\n" + r("乙", 200) + "\n" + r("丙", 200),
			[]passageSpan{{0, 401}, {402, 602}}},
		{"exactly 500 packed", r("甲", 249) + "\n" + r("乙", 250), []passageSpan{{0, 500}}},
		{"cut after a sentence end in the second half", r("甲", 299) + "。" + r("乙", 300),
			[]passageSpan{{0, 300}, {300, 600}}},
		{"cut at the last sentence end of the window", r("甲", 280) + "。" + r("乙", 100) + "！" + r("丙", 300),
			[]passageSpan{{0, 382}, {382, 682}}},
		{"a sentence end only in the first half is not used", r("甲", 100) + "。" + r("乙", 500),
			[]passageSpan{{0, 500}, {500, 601}}},
		{"no sentence end: cut at 500", r("字", 1200), []passageSpan{{0, 500}, {500, 1000}, {1000, 1200}}},
		{"white space at a cut is left out", r("甲", 299) + "。 " + r("乙", 300),
			[]passageSpan{{0, 300}, {301, 601}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := passages(c.text)
			if !slices.Equal(got, c.want) {
				t.Fatalf("passages: %v, want %v", got, c.want)
			}
			rs := []rune(c.text)
			for _, p := range got {
				if p.end-p.start > 500 {
					t.Errorf("passage %v is longer than 500 characters", p)
				}
				if s := string(rs[p.start:p.end]); strings.TrimSpace(s) != s {
					t.Errorf("passage %v starts or ends with white space: %q", p, s)
				}
			}
		})
	}
}
