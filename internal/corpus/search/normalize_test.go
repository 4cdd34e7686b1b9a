package search

import (
	"testing"
	"unicode"

	"golang.org/x/text/width"
)

// TestFoldFastPaths checks that the ASCII and CJK shortcuts of fold agree
// with the general rule for every rune they cover.
func TestFoldFastPaths(t *testing.T) {
	general := func(r rune) (rune, bool) {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return 0, false
		}
		if f := width.LookupRune(r).Folded(); f != 0 {
			r = f
		}
		return unicode.ToLower(r), true
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0x80 && (r < 0x4E00 || r > 0x9FFF) {
			continue
		}
		g, gok := general(r)
		f, fok := fold(r)
		if g != f || gok != fok {
			t.Fatalf("fold(%U) = %U %v, the general rule says %U %v", r, f, fok, g, gok)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"国办发〔2024〕12号", "国办发202412号"},
		{"国办发[2024]12号", "国办发202412号"},
		{"ＰＤＦ版 PDF", "pdf版pdf"},
		{"２０２４年３月", "2024年3月"},
		{"“一网通办”。", "一网通办"},
		{"\u3000 \t\n", ""},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
