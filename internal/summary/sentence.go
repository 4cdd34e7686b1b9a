package summary

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentenceEnds end a sentence inside a line; a line break ends one too.
const sentenceEnds = "。！？；!?;"

// closers may follow a sentence's end mark and stay with it (。” ）).
const closers = "”’」』）)】》"

// joinFree are the end marks after which the next sentence follows directly
// in a summary; after any other ending (a line with no end mark, a closing
// quote) sentences are joined by a line break, so that splitting a summary
// at 。！？； and line breaks gives back pieces of the source.
const joinFree = "。！？；"

// sentence is one sentence of the source: a piece of one line ending at an
// end mark (with any closing quotes) or at the end of the line, white space
// trimmed.
type sentence struct {
	start, end int // byte offsets in the source
	text       string
	runes      int
	line       int  // index of its line
	free       bool // ends in a joinFree mark
	vec        vector
}

// cost is what the sentence adds to a summary's length: its runes and the
// line break that may follow it.
func (s *sentence) cost() int {
	if s.free {
		return s.runes
	}
	return s.runes + 1
}

// splitSentences splits text into sentences in source order.
func splitSentences(text string) []sentence {
	var out []sentence
	emit := func(s, e, line int) {
		for s < e {
			r, n := utf8.DecodeRuneInString(text[s:])
			if !unicode.IsSpace(r) {
				break
			}
			s += n
		}
		for e > s {
			r, n := utf8.DecodeLastRuneInString(text[:e])
			if !unicode.IsSpace(r) {
				break
			}
			e -= n
		}
		if s >= e {
			return
		}
		t := text[s:e]
		last, _ := utf8.DecodeLastRuneInString(t)
		out = append(out, sentence{start: s, end: e, text: t, runes: utf8.RuneCountInString(t), line: line,
			free: strings.ContainsRune(joinFree, last)})
	}
	line, start := 0, 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			emit(start, i, line)
			line++
			i += n
			start = i
		case strings.ContainsRune(sentenceEnds, r):
			i += n
			for i < len(text) {
				c, m := utf8.DecodeRuneInString(text[i:])
				if !strings.ContainsRune(closers, c) {
					break
				}
				i += m
			}
			emit(start, i, line)
			start = i
		default:
			i += n
		}
	}
	emit(start, len(text), line)
	return out
}

// leadAndLast are the first and the last paragraph of text, the part a
// summary's relevance is judged against. A paragraph is a line of running
// prose — one with a sentence end mark (。！？) in it; headings, table rows,
// salutations and signature lines are not. Text with no such line falls
// back to its first and last non-empty lines. The two are the same span when
// there is one paragraph.
func leadAndLast(text string) (lead, last span) {
	first := true
	fallbackFirst := true
	var fbLead, fbLast span
	off := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		s := span{off, off + len(l)}
		off += len(l)
		if strings.TrimSpace(l) == "" {
			continue
		}
		if fallbackFirst {
			fbLead, fallbackFirst = s, false
		}
		fbLast = s
		if strings.ContainsAny(l, "。！？") {
			if first {
				lead, first = s, false
			}
			last = s
		}
	}
	if first {
		return fbLead, fbLast
	}
	return lead, last
}

// reference is the text of the first and last paragraphs.
func reference(text string) string {
	lead, last := leadAndLast(text)
	if lead == last {
		return strings.TrimSpace(text[lead.start:lead.end])
	}
	return strings.TrimSpace(text[lead.start:lead.end]) + "\n" + strings.TrimSpace(text[last.start:last.end])
}
