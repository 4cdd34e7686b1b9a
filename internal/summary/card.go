package summary

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"zhizhi/internal/extract"
)

// The gates. Their numbers are the rules; tests write them out again rather
// than reading these.
const (
	// MaxRunes caps every summary; a shorter source caps it at a tenth of
	// its own length.
	MaxRunes = 300
	// SigmaIndexed is the lowest σ of a card that is indexed (green).
	SigmaIndexed = 0.85
	// SigmaReview is the lowest σ of a card a person may rewrite (yellow);
	// below it a card shows title and link only (red).
	SigmaReview = 0.70
	// MaxRelevance is the largest Hamming distance, of 64 bits, between a
	// summary's simhash and that of its source's first and last paragraphs.
	MaxRelevance = 20
)

// runesPerAnchor ties the number of core anchors to the summary's budget:
// one per 30 characters, about one clause of a government document, so a
// summary can hold every core anchor with room for the words around them.
const runesPerAnchor = 30

// minCut is the fewest characters of a sentence a cut keeps; a shorter
// fragment tells a reader nothing.
const minCut = 4

// maxCutTries bounds the sentences tried for a head that fills the budget.
const maxCutTries = 32

// ellipsis ends a summary whose last sentence was cut.
const ellipsis = "…"

// Grade is a card's standing.
type Grade string

// The grades.
const (
	// Green cards are indexed: σ ≥ 0.85 and the relevance check passes.
	Green Grade = "green"
	// Yellow cards wait for a person's rewrite: 0.70 ≤ σ < 0.85, or σ ≥ 0.85
	// with a summary that fails the relevance check.
	Yellow Grade = "yellow"
	// Red cards show title and link only: σ < 0.70 or no summary at all.
	Red Grade = "red"
)

// Input is what a card is made from.
type Input struct {
	Title string
	// Text is the body text, one line per paragraph. For a summary-access
	// site it is the text of the head that was read, and that head is "the
	// original" every rule here measures.
	Text        string
	SourceURL   string
	PublishTime *time.Time
	FetchedAt   time.Time
}

// Card is one article's summary card.
type Card struct {
	Title, Summary, SourceURL string
	PublishTime               *time.Time
	// Simhash is the simhash of the source text, for near-duplicate
	// detection and change detection.
	Simhash uint64
	// SourceDNA is the hex SHA-256 of the canonical source URL and the exact
	// text summarised: two cards with the same DNA came from the same
	// version of the same page.
	SourceDNA string
	FetchedAt time.Time
	// Anchors are the source's core anchors, most salient first.
	Anchors []Anchor
	// Covered is how many core anchors the summary contains.
	Covered int
	// Sigma is Covered / len(Anchors), and 0 when the source has no anchor.
	Sigma float64
	// Relevance is the Hamming distance between the summary's simhash and
	// that of the source's first and last paragraphs.
	Relevance int
	Grade     Grade
	// Reference is the simhash of the source's first and last paragraphs,
	// and Limit the longest summary the source allows: with Anchors they are
	// what a rewrite is graded by once the source text is gone (a
	// summary-access site keeps none).
	Reference uint64
	Limit     int
}

// Gauge is what grading a summary needs of its source.
type Gauge struct {
	Anchors   []Anchor
	Reference uint64
	Limit     int
}

// Verdict is a graded summary text.
type Verdict struct {
	Covered   int
	Sigma     float64
	Relevance int
	Grade     Grade
	Missing   []Anchor // the core anchors the text does not contain
}

// Regrade grades a person's text by a card's gauge, with the same length
// cap and gates as Build and Rewrite.
func Regrade(g Gauge, text string) (Verdict, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Verdict{}, ErrEmpty
	}
	if n := utf8.RuneCountInString(text); n > g.Limit {
		return Verdict{}, &TooLongError{Limit: g.Limit, Length: n}
	}
	var v Verdict
	flat := squash(text)
	for _, an := range g.Anchors {
		if strings.Contains(flat, an.Text) {
			v.Covered++
		} else {
			v.Missing = append(v.Missing, an)
		}
	}
	if len(g.Anchors) > 0 {
		v.Sigma = float64(v.Covered) / float64(len(g.Anchors))
	}
	v.Relevance = Hamming(Simhash(text), g.Reference)
	v.Grade = grade(text, v.Sigma, v.Relevance)
	return v, nil
}

// ErrEmpty is returned for a rewrite with no text.
var ErrEmpty = errors.New("摘要不能为空")

// TooLongError is returned for a rewrite longer than the card's cap.
type TooLongError struct {
	Limit, Length int // in characters
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("摘要最多 %d 字，现为 %d 字", e.Limit, e.Length)
}

// Build makes the card of in with an extractive summary.
func Build(in Input) Card {
	a := analyse(in)
	return a.card(in, a.choose())
}

// Rewrite makes the card of in with a person's own summary text. The length
// cap is the same as Build's; σ, relevance and grade are computed the same
// way, but the text need not be taken from the source.
func Rewrite(in Input, text string) (Card, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Card{}, ErrEmpty
	}
	limit := Limit(in.Text)
	if n := utf8.RuneCountInString(text); n > limit {
		return Card{}, &TooLongError{Limit: limit, Length: n}
	}
	a := analyse(in)
	return a.card(in, text), nil
}

// Limit is the longest summary of source, in characters: 300, or a tenth
// of the source when that is less. The source's white space (line breaks
// between paragraphs, spaces between table cells) is layout, not text, and
// does not count towards its length.
func Limit(source string) int {
	n := 0
	for _, r := range source {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return min(MaxRunes, n/10)
}

// analysis is what Build and Rewrite know about a source.
type analysis struct {
	text      string
	budget    int
	all       []rankedAnchor
	core      []Anchor
	sentences []sentence
	masks     []uint32 // per sentence: the core anchors it contains
	ref       vector   // of the first and last paragraphs
	refText   string
	protected map[int][]span // per sentence, once asked for: see protectedSpans
}

func analyse(in Input) *analysis {
	a := &analysis{text: in.Text, budget: Limit(in.Text), protected: map[int][]span{}}
	a.all = rankAnchors(in.Title, in.Text)
	// At most 10: a full summary's 300 characters over 30.
	n := min(len(a.all), max(1, a.budget/runesPerAnchor))
	for _, r := range a.all[:n] {
		a.core = append(a.core, r.Anchor)
	}
	a.sentences = splitSentences(in.Text)
	a.masks = make([]uint32, len(a.sentences))
	for i := range a.sentences {
		s := &a.sentences[i]
		s.vec.add(s.text)
		a.masks[i] = a.coverage(s.text)
	}
	a.refText = reference(in.Text)
	a.ref.add(a.refText)
	return a
}

// coverage is the set of core anchors text contains.
func (a *analysis) coverage(text string) uint32 {
	flat := squash(text)
	var m uint32
	for i, c := range a.core {
		if strings.Contains(flat, c.Text) {
			m |= 1 << uint(i)
		}
	}
	return m
}

func (a *analysis) card(in Input, summary string) Card {
	c := Card{
		Title: in.Title, Summary: summary, SourceURL: in.SourceURL, PublishTime: in.PublishTime,
		Simhash: Simhash(in.Text), SourceDNA: sourceDNA(in.SourceURL, in.Text), FetchedAt: in.FetchedAt,
		Anchors: a.core,
	}
	c.Covered = bits.OnesCount32(a.coverage(summary))
	if len(a.core) > 0 {
		c.Sigma = float64(c.Covered) / float64(len(a.core))
	}
	c.Reference, c.Limit = Simhash(a.refText), a.budget
	c.Relevance = Hamming(Simhash(summary), c.Reference)
	c.Grade = grade(summary, c.Sigma, c.Relevance)
	return c
}

// grade applies the gates.
func grade(summary string, sigma float64, relevance int) Grade {
	switch {
	case strings.TrimSpace(summary) == "" || sigma < SigmaReview:
		return Red
	case sigma >= SigmaIndexed && relevance <= MaxRelevance:
		return Green
	default:
		return Yellow
	}
}

// sourceDNA hashes the canonical URL and the text, NUL-separated (neither
// can hold a NUL, so no two pairs hash alike).
func sourceDNA(rawURL, text string) string {
	u, err := extract.NormalizeURL(rawURL)
	if err != nil {
		u = strings.TrimSpace(rawURL)
	}
	sum := sha256.Sum256([]byte("zhizhi source dna v1\x00" + u + "\x00" + text))
	return hex.EncodeToString(sum[:])
}

// pick is a summary being assembled: whole sentences and at most one cut.
type pick struct {
	a       *analysis
	chosen  []int // sentence indices
	used    int   // characters spent, line breaks included
	covered uint32
	vec     vector
	cut     string // the kept head of the cut sentence, without the ellipsis
	cutAt   int    // its sentence index
	texts   map[string]bool
}

func (p *pick) left() int { return p.a.budget - p.used }

func (p *pick) lastChosen() int {
	last := -1
	for _, i := range p.chosen {
		last = max(last, i)
	}
	return last
}

func (p *pick) distanceWith(v *vector) int {
	w := p.vec
	w.plus(v)
	return Hamming(w.hash(), p.a.ref.hash())
}

func (p *pick) take(i int) {
	s := &p.a.sentences[i]
	p.texts[s.text] = true
	p.chosen = append(p.chosen, i)
	p.used += s.cost()
	p.covered |= p.a.masks[i]
	p.vec.plus(&s.vec)
}

// choose picks the summary. Four ways of choosing sentences for the core
// anchors are tried (byRatio, byRank cheapest and nearest, byOrder), each
// finished the same way (finish), and the best (better) is kept.
func (a *analysis) choose() string {
	ref := a.ref.hash()
	var best *pick
	var bestDist int
	for _, p := range []*pick{a.byRatio(), a.byRank(false), a.byRank(true), a.byOrder()} {
		p = a.finish(p)
		d := Hamming(p.vec.hash(), ref)
		if best == nil || better(p.covered, d, best.covered, bestDist) {
			best, bestDist = p, d
		}
	}
	return best.render()
}

// better orders finished picks: more core anchors covered, then passing
// the relevance gate, then nearer the first and last paragraphs.
func better(covered uint32, dist int, thanCovered uint32, thanDist int) bool {
	c, tc := bits.OnesCount32(covered), bits.OnesCount32(thanCovered)
	if c != tc {
		return c > tc
	}
	if ok, tok := dist <= MaxRelevance, thanDist <= MaxRelevance; ok != tok {
		return ok
	}
	return dist < thanDist
}

// byRatio takes, while any fits, the sentence that covers the most core
// anchors not yet covered per character, nearest the first and last
// paragraphs on a tie.
func (a *analysis) byRatio() *pick {
	p := &pick{a: a, cutAt: -1, texts: map[string]bool{}}
	for {
		best, bestGain, bestCost, bestDist := -1, 0, 0, 0
		for i := range a.sentences {
			s := &a.sentences[i]
			gain := bits.OnesCount32(a.masks[i] &^ p.covered)
			if gain == 0 || s.cost() > p.left() || p.has(i) {
				continue
			}
			d := p.distanceWith(&s.vec)
			// gain/cost against bestGain/bestCost, cross-multiplied.
			if best < 0 || gain*bestCost > bestGain*s.cost() || gain*bestCost == bestGain*s.cost() && d < bestDist {
				best, bestGain, bestCost, bestDist = i, gain, s.cost(), d
			}
		}
		if best < 0 {
			return p
		}
		p.take(best)
	}
}

// byOrder reads the source from the start and takes every sentence that
// covers a core anchor not yet covered and still fits, the way a person
// writing a lead would; what remains is left to a cut after them.
func (a *analysis) byOrder() *pick {
	p := &pick{a: a, cutAt: -1, texts: map[string]bool{}}
	for i := range a.sentences {
		if a.masks[i]&^p.covered != 0 && a.sentences[i].cost() <= p.left() && !p.has(i) {
			p.take(i)
		}
	}
	return p
}

// byRank takes, for each core anchor from the most salient down that is not
// yet covered, a sentence that carries it and still fits: the one covering
// the most other uncovered anchors per character, or with nearest, the one
// that keeps the summary nearest the first and last paragraphs. It wins
// over byRatio when a tight budget needs one long sentence for an anchor
// found nowhere else, or when the cheapest sentences stray from the text's
// opening and close.
func (a *analysis) byRank(nearest bool) *pick {
	p := &pick{a: a, cutAt: -1, texts: map[string]bool{}}
	for k := range a.core {
		if p.covered&(1<<uint(k)) != 0 {
			continue
		}
		best, bestGain, bestCost, bestDist := -1, 0, 0, 0
		for i := range a.sentences {
			s := &a.sentences[i]
			if a.masks[i]&(1<<uint(k)) == 0 || s.cost() > p.left() || p.has(i) {
				continue
			}
			gain := bits.OnesCount32(a.masks[i] &^ p.covered)
			d := p.distanceWith(&s.vec)
			switch {
			case best < 0:
			case nearest && d != bestDist:
				if d > bestDist {
					continue
				}
			case gain*bestCost < bestGain*s.cost():
				continue
			case gain*bestCost == bestGain*s.cost() && d >= bestDist:
				continue
			}
			best, bestGain, bestCost, bestDist = i, gain, s.cost(), d
		}
		if best >= 0 {
			p.take(best)
		}
	}
	return p
}

// finish completes a pick: when core anchors remain that no whole sentence
// left can carry, the head of one later sentence cut after them; else
// sentences that bring the summary closer to the first and last
// paragraphs, and a cut head of one more sentence to use the budget.
func (a *analysis) finish(p *pick) *pick {
	full := uint32(1)<<uint(len(a.core)) - 1
	if p.covered != full {
		p.cutForAnchors()
	}
	if p.cutAt < 0 {
		p.fill()
		p.cutToFill()
	}
	return p
}

// has reports whether sentence i, or one with the same words, is taken: a
// summary never says the same sentence twice.
func (p *pick) has(i int) bool { return p.texts[p.a.sentences[i].text] }

// cutForAnchors ends the summary with the head of a later sentence that
// carries core anchors not yet covered, when one fits.
func (p *pick) cutForAnchors() {
	a := p.a
	room := p.left() - 1 // the ellipsis
	bestGain := 0
	for i := p.lastChosen() + 1; i < len(a.sentences); i++ {
		s := &a.sentences[i]
		missing := a.masks[i] &^ p.covered
		if missing == 0 {
			continue
		}
		// The head must reach the end of every missing anchor it keeps;
		// take the anchors nearest the start first.
		need := 0
		var gained uint32
		for k, c := range a.core {
			if missing&(1<<uint(k)) == 0 {
				continue
			}
			at := strings.Index(s.text, c.Text)
			if at < 0 {
				continue
			}
			end := at + len(c.Text)
			if utf8.RuneCountInString(s.text[:max(need, end)]) > room {
				continue
			}
			need = max(need, end)
			gained |= 1 << uint(k)
		}
		if g := bits.OnesCount32(gained); g > bestGain {
			if head := p.a.cutHead(i, need, room); head != "" {
				bestGain, p.cut, p.cutAt = g, head, i
			}
		}
	}
	p.endWithCut()
}

// fill adds whole sentences that bring the summary nearer its source's first
// and last paragraphs (or keep it within the relevance gate), trying them in
// the order of their own distance to those paragraphs.
func (p *pick) fill() {
	a := p.a
	ref := a.ref.hash()
	order := make([]int, 0, len(a.sentences))
	own := make([]int, len(a.sentences))
	for i := range a.sentences {
		if !p.has(i) {
			order = append(order, i)
			own[i] = Hamming(a.sentences[i].vec.hash(), ref)
		}
	}
	sort.SliceStable(order, func(x, y int) bool { return own[order[x]] < own[order[y]] })
	for _, i := range order {
		s := &a.sentences[i]
		// Headings, table rows and signature lines say little without the
		// anchors that earn them a place in the first round.
		if !s.free || s.cost() > p.left() || p.has(i) {
			continue
		}
		cur := Hamming(p.vec.hash(), ref)
		if d := p.distanceWith(&s.vec); d > MaxRelevance && d > cur {
			continue
		}
		p.take(i)
	}
}

// cutToFill spends what budget is left on the head of one sentence after the
// last one chosen, the one that keeps the summary nearest its source's
// first and last paragraphs.
func (p *pick) cutToFill() {
	a := p.a
	room := p.left() - 1
	if room < minCut {
		return
	}
	cur := Hamming(p.vec.hash(), a.ref.hash())
	if len(p.chosen) == 0 {
		cur = 65 // anything beats nothing
	}
	bestDist := 0
	// The next few sentences are enough to find a good head; all of them
	// would make a text of many tiny sentences slow.
	for i := p.lastChosen() + 1; i < min(len(a.sentences), p.lastChosen()+1+maxCutTries); i++ {
		if p.has(i) {
			continue
		}
		head := a.cutHead(i, 0, room)
		if head == "" {
			continue
		}
		var v vector
		v.add(head)
		d := p.distanceWith(&v)
		if d > MaxRelevance && d > cur {
			continue
		}
		if p.cutAt < 0 || d < bestDist {
			p.cut, p.cutAt, bestDist = head, i, d
		}
	}
	p.endWithCut()
}

// endWithCut counts the chosen cut head, if any, and its ellipsis.
func (p *pick) endWithCut() {
	if p.cutAt < 0 {
		return
	}
	p.covered |= p.a.coverage(p.cut)
	p.used += utf8.RuneCountInString(p.cut) + 1
	var v vector
	v.add(p.cut)
	p.vec.plus(&v)
}

// cutHead is the longest head of sentence i, at most room characters and
// at least need bytes, that ends where a reader expects a pause: at a clause mark
// (，、：) when one falls in the second half of the room, else anywhere that
// splits no anchor, word or number. It is "" when no such head of at least
// minCut characters exists, or when s fits whole.
func (a *analysis) cutHead(i, need, room int) string {
	s := a.sentences[i].text
	if room < minCut || utf8.RuneCountInString(s) <= room {
		return ""
	}
	// limit: the byte offset after room runes.
	limit, n := 0, 0
	for i := range s {
		if n == room {
			limit = i
			break
		}
		n++
	}
	if limit < need {
		return ""
	}
	protected, ok := a.protected[i]
	if !ok {
		protected = a.protectedSpans(s)
		a.protected[i] = protected
	}
	clean := func(p int) bool {
		if p < need || p == 0 || p >= len(s) {
			return false
		}
		for _, sp := range protected {
			if p > sp.start && p < sp.end {
				return false
			}
		}
		r1, _ := utf8.DecodeLastRuneInString(s[:p])
		r2, _ := utf8.DecodeRuneInString(s[p:])
		return !(isWordRune(r1) && isWordRune(r2)) && r1 != '.' && r2 != '.' && !unicode.IsSpace(r1) && !strings.ContainsRune("（(《“‘「【", r1)
	}
	half := utf8.RuneCountInString(s[:limit]) / 2
	for p := limit; p > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:p])
		if utf8.RuneCountInString(s[:p]) <= half {
			break
		}
		if strings.ContainsRune("，、：,:", r) && clean(p-size) && utf8.RuneCountInString(s[:p-size]) >= minCut {
			return s[:p-size]
		}
		p -= size
	}
	for p := limit; p > 0; {
		if utf8.RuneCountInString(s[:p]) < minCut {
			break
		}
		if clean(p) {
			return strings.TrimRightFunc(s[:p], unicode.IsSpace)
		}
		_, size := utf8.DecodeLastRuneInString(s[:p])
		p -= size
	}
	return ""
}

// protectedSpans are the byte ranges in s that a cut must not split: every
// date, number and document number, and the most salient anchors.
func (a *analysis) protectedSpans(s string) []span {
	var out []span
	// Nothing past the window can straddle a cut inside the room.
	s = s[:min(len(s), a.budget*utf8.UTFMax+256)]
	for _, re := range []*regexp.Regexp{docNoRe, dateRe, numberRe} {
		for _, m := range re.FindAllStringIndex(s, -1) {
			out = append(out, span{m[0], m[1]})
		}
	}
	for _, r := range a.all[:min(len(a.all), 64)] {
		for off := 0; ; {
			i := strings.Index(s[off:], r.Text)
			if i < 0 {
				break
			}
			out = append(out, span{off + i, off + i + len(r.Text)})
			off += i + len(r.Text)
		}
	}
	return out
}

// render joins the chosen sentences in source order, then the cut head and
// its ellipsis.
func (p *pick) render() string {
	idx := append([]int(nil), p.chosen...)
	sort.Ints(idx)
	var b strings.Builder
	for k, i := range idx {
		s := &p.a.sentences[i]
		b.WriteString(s.text)
		if !s.free && (k < len(idx)-1 || p.cutAt >= 0) {
			b.WriteByte('\n')
		}
	}
	if p.cutAt >= 0 {
		b.WriteString(p.cut)
		b.WriteString(ellipsis)
	}
	return b.String()
}
