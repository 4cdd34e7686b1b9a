package search

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// folded is a text as the index sees it, with the byte span of every kept
// rune in the original, so a match found in the folded runes can be
// highlighted in the text the user reads.
type folded struct {
	runes      []rune
	start, end []int // byte offsets in the original text
}

func foldText(s string) folded {
	n := utf8.RuneCountInString(s)
	f := folded{runes: make([]rune, 0, n), start: make([]int, 0, n), end: make([]int, 0, n)}
	for i, r := range s {
		if k, ok := fold(r); ok {
			f.runes = append(f.runes, k)
			f.start = append(f.start, i)
			f.end = append(f.end, i+utf8.RuneLen(r))
		}
	}
	return f
}

// matches returns the byte spans in the original text of every occurrence
// of every term, sorted, overlapping and touching spans merged. A match may
// enclose punctuation the index skipped (国办发〔2024〕12号 for the term
// 国办发202412号).
func (f folded) matches(terms [][]rune) [][2]int {
	var out [][2]int
	for _, t := range terms {
		if len(t) == 0 {
			continue
		}
		for i := 0; i+len(t) <= len(f.runes); i++ {
			if f.runes[i] == t[0] && slices.Equal(f.runes[i:i+len(t)], t) {
				out = append(out, [2]int{f.start[i], f.end[i+len(t)-1]})
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && s[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// spans marks every term in s (byte offsets into s).
func spans(s string, terms [][]rune) [][2]int {
	if len(terms) == 0 {
		return nil
	}
	return foldText(s).matches(terms)
}

// ellipsis marks where a snippet cuts the body.
const ellipsis = "…"

// snippetLead is how many runes of context a snippet shows before the
// first match, when the match's own line has that many.
const snippetLead = 30

// snippet cuts about SnippetRunes of body around the first match and marks
// every term inside the window.
func snippet(body string, terms [][]rune) (string, [][2]int) {
	if body == "" {
		return "", nil
	}
	ms := spans(body, terms)
	// Rune boundaries of body as byte offsets; bounds[len] = len(body).
	bounds := make([]int, 0, len(body)/3+1)
	for i := range body {
		bounds = append(bounds, i)
	}
	nr := len(bounds)
	bounds = append(bounds, len(body))
	first := 0
	if len(ms) > 0 {
		first, _ = slices.BinarySearch(bounds, ms[0][0])
	}
	from := max(0, first-snippetLead)
	// Start at the beginning of the match's line when it is near.
	if k := strings.LastIndexAny(body[bounds[from]:bounds[first]], "\n\r"); k >= 0 {
		from, _ = slices.BinarySearch(bounds, bounds[from]+k+1)
	}
	to := min(nr, from+SnippetRunes)
	if to < nr && len(ms) > 0 && ms[0][1] > bounds[to] {
		// A long first match: show as much of it as the window holds.
		to = min(nr, from+max(SnippetRunes, first-from+SnippetRunes/2))
	}
	bs, be := bounds[from], bounds[to]
	var b strings.Builder
	shift := -bs
	if from > 0 {
		b.WriteString(ellipsis)
		shift += len(ellipsis)
	}
	b.WriteString(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, body[bs:be]))
	if to < nr {
		b.WriteString(ellipsis)
	}
	var hs [][2]int
	for _, m := range ms {
		if m[0] >= bs && m[1] <= be {
			hs = append(hs, [2]int{m[0] + shift, m[1] + shift})
		}
	}
	return b.String(), hs
}
