package summary

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Simhash is the 64-bit simhash of text. Tokens are overlapping bigrams of
// every run of CJK characters (a run of one is a token of its own) and whole
// words of letters and digits (lower-cased); punctuation and white space only
// separate tokens. Each token occurrence votes +1 or −1 on every bit by its
// hash; a bit is set where the votes are positive. Text with no token hashes
// to 0.
//
// The token hash is FNV-1a 64 followed by murmur3's 64-bit finalizer: the
// value is the same in every process and every version of Go (unlike
// hash/maphash or map order), and the finalizer makes every output bit
// depend on every input byte — plain FNV-1a leaves the low bits of short
// tokens nearly linear in their last bytes, which biases a simhash.
func Simhash(text string) uint64 {
	var v vector
	v.add(text)
	return v.hash()
}

// Hamming is the number of bits in which a and b differ (0 to 64).
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// vector is a simhash before its signs are taken. Vectors of texts that share
// no token across their boundary add up, so a summary's simhash can be
// judged from the vectors of its sentences without re-tokenizing it.
type vector [64]int32

func (v *vector) add(text string) {
	forEachToken(text, func(tok string) {
		h := tokenHash(tok)
		for i := range v {
			if h&(1<<uint(i)) != 0 {
				v[i]++
			} else {
				v[i]--
			}
		}
	})
}

func (v *vector) plus(w *vector) {
	for i := range v {
		v[i] += w[i]
	}
}

func (v *vector) hash() uint64 {
	var h uint64
	for i, c := range v {
		if c > 0 {
			h |= 1 << uint(i)
		}
	}
	return h
}

// isCJK reports whether r is written without spaces between words: Han
// (with 〇), kana and Hangul.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || r == '〇' || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

func isWordRune(r rune) bool { return !isCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// forEachToken calls f with every token of text, in order.
func forEachToken(text string, f func(string)) {
	runStart, runLen := 0, 0 // the current CJK run: its first byte and length in runes
	prev := 0                // byte offset of the run's previous rune
	wordStart := -1
	endRun := func(at int) {
		if runLen == 1 {
			f(text[runStart:at])
		}
		runLen = 0
	}
	for i, r := range text {
		if isCJK(r) {
			if wordStart >= 0 {
				f(strings.ToLower(text[wordStart:i]))
				wordStart = -1
			}
			if runLen == 0 {
				runStart = i
			} else {
				f(text[prev : i+utf8.RuneLen(r)])
			}
			prev = i
			runLen++
			continue
		}
		if runLen > 0 {
			endRun(i)
		}
		if isWordRune(r) {
			if wordStart < 0 {
				wordStart = i
			}
		} else if wordStart >= 0 {
			f(strings.ToLower(text[wordStart:i]))
			wordStart = -1
		}
	}
	if runLen > 0 {
		endRun(len(text))
	}
	if wordStart >= 0 {
		f(strings.ToLower(text[wordStart:]))
	}
}

// tokenHash is FNV-1a 64 of tok, finalized with murmur3's fmix64.
func tokenHash(tok string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(tok); i++ {
		h ^= uint64(tok[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
