package api

import "unicode"

// passageMaxChars is the most characters one passage of a release export
// holds: about a paragraph or two of a government document, small enough
// for a retrieval index to embed and quote, large enough to stand alone.
const passageMaxChars = 500

// passageSpan is a passage's half-open [start, end) in characters (Unicode
// code points) of a work's canonical text.
type passageSpan struct{ start, end int }

// passages splits text into passages, deterministically, so the same text
// always gives the same spans (and passage ids):
//
//  1. Paragraphs are the lines between line breaks, with the white space
//     at both ends left out; empty lines are dropped.
//  2. A paragraph longer than passageMaxChars is cut into pieces of at
//     most passageMaxChars: after the last sentence end (。！？；!?; or …)
//     in the second half of the window, else at exactly passageMaxChars;
//     white space at the cut is left out.
//  3. Consecutive pieces are packed into one passage while the passage,
//     from its first piece's start to its last piece's end (line breaks
//     between included), stays within passageMaxChars.
//
// The white space between passages belongs to none, so runes[start:end]
// of every span is the passage's exact text.
func passages(text string) []passageSpan {
	rs := []rune(text)
	var pieces []passageSpan
	lineStart := 0
	for i := 0; i <= len(rs); i++ {
		if i < len(rs) && rs[i] != '\n' {
			continue
		}
		s, e := trimSpan(rs, lineStart, i)
		lineStart = i + 1
		for e-s > passageMaxChars {
			cut := s + passageMaxChars
			for j := s + passageMaxChars; j > s+passageMaxChars/2; j-- {
				if sentenceEnd(rs[j-1]) {
					cut = j
					break
				}
			}
			if ps, pe := trimSpan(rs, s, cut); ps < pe {
				pieces = append(pieces, passageSpan{ps, pe})
			}
			s, e = trimSpan(rs, cut, e)
		}
		if s < e {
			pieces = append(pieces, passageSpan{s, e})
		}
	}
	var out []passageSpan
	for _, p := range pieces {
		if n := len(out); n > 0 && p.end-out[n-1].start <= passageMaxChars {
			out[n-1].end = p.end
			continue
		}
		out = append(out, p)
	}
	return out
}

// trimSpan narrows [s, e) of rs to leave out white space at both ends.
func trimSpan(rs []rune, s, e int) (int, int) {
	for s < e && unicode.IsSpace(rs[s]) {
		s++
	}
	for e > s && unicode.IsSpace(rs[e-1]) {
		e--
	}
	return s, e
}

func sentenceEnd(r rune) bool {
	switch r {
	case '。', '！', '？', '；', '!', '?', ';', '…':
		return true
	}
	return false
}
