package search

import (
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// fold maps one rune of text to the rune the index holds for it, or reports
// false for a rune that is not indexed (punctuation, symbols, spaces,
// controls). Full-width forms fold to their ASCII twins and letters are
// lower-cased, so ＰＤＦ, PDF and pdf are one word. Every kept rune maps to
// exactly one rune: snippets rely on that to map matches back to the text.
func fold(r rune) (rune, bool) {
	// Fast paths for ASCII and the main CJK block (all letters, no case, no
	// width variants); the general path below gives the same answers.
	switch {
	case r < 0x80:
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r, true
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A'), true
		}
		return 0, false
	case 0x4E00 <= r && r <= 0x9FFF:
		return r, true
	}
	if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
		return 0, false
	}
	if f := width.LookupRune(r).Folded(); f != 0 {
		r = f
	}
	return unicode.ToLower(r), true
}

// normalize returns the indexed runes of s, in order.
func normalize(s string) []rune {
	out := make([]rune, 0, len(s)/3+1)
	for _, r := range s {
		if f, ok := fold(r); ok {
			out = append(out, f)
		}
	}
	return out
}

// Normalize returns s as the index sees it: letters and digits only,
// full-width folded, lower-cased; everything else dropped. Search matches a
// query term wherever Normalize(term) is a substring of Normalize(field)
// for the title, the body or the 文号.
func Normalize(s string) string { return string(normalize(s)) }

// unigrams writes the runes of n separated by spaces: "政 务 公 开".
func unigrams(n []rune) string {
	var b strings.Builder
	b.Grow(len(n) * 4)
	for i, r := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// bigrams writes every adjacent pair of n separated by spaces:
// "政务 务公 公开". A text of one rune has no pairs.
func bigrams(n []rune) string {
	if len(n) < 2 {
		return ""
	}
	var b strings.Builder
	b.Grow(len(n) * 7)
	for i := 0; i+1 < len(n); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(n[i])
		b.WriteRune(n[i+1])
	}
	return b.String()
}
