package summary

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Anchor kinds.
const (
	KindDate   = "date"
	KindNumber = "number"
	KindDocNo  = "docno"
	KindOrg    = "org"
	KindTerm   = "term"
)

// Anchor is a fact a summary should keep: a date, a number with its unit, a
// document number, an organisation or a key term, as written in the source
// (white space removed).
type Anchor struct {
	Text string
	Kind string
}

// Anchors lists every anchor of text, most salient first, each once. Key
// terms here are the repeated phrases of the text itself; Build also uses
// the title (see the package doc).
func Anchors(text string) []Anchor {
	ranked := rankAnchors("", text)
	out := make([]Anchor, len(ranked))
	for i, a := range ranked {
		out[i] = a.Anchor
	}
	return out
}

var (
	docNoRe = regexp.MustCompile(`[\p{Han}]{1,10}[〔\[［【(（]\s*(?:19|20)\d{2}\s*[〕\]］】)）]\s*第?\s*\d{1,5}\s*号`)
	dateRe  = regexp.MustCompile(`(?:19|20)\d{2}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号]` +
		`|(?:19|20)\d{2}-\d{1,2}-\d{1,2}|(?:19|20)\d{2}/\d{1,2}/\d{1,2}|(?:19|20)\d{2}\.\d{1,2}\.\d{1,2}` +
		`|[〇零一二三四五六七八九○]{4}年[一二三四五六七八九十]{1,3}月(?:[一二三四五六七八九十]{1,3}日)?` +
		`|(?:19|20)\d{2}\s*年\s*\d{1,2}\s*月|\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:19|20)\d{2}\s*年`)
	numberRe = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?\s*(?:` +
		`万亿元|亿美元|亿元|万美元|万元|千元|美元|元|个百分点|百分点|%|％|‰|` +
		`平方公里|平方千米|平方米|立方米|公顷|万亩|亩|公里|千米|厘米|毫米|米|万吨|千克|公斤|吨|` +
		`万千瓦|千瓦时|千瓦|兆瓦|万人次|人次|万人|万户|人|名|户|家|个工作日|工作日|个月|小时|分钟|天|周岁|岁|` +
		`个|项|件|所|座|辆|台|套|张|份|批|宗|条|处|栋|间|床|倍)`)
	bookRe = regexp.MustCompile(`《([^《》\n]{2,40})》`)
)

// orgSuffixes end an organisation's name, longest first so that 人民政府 wins
// over 政府.
var orgSuffixes = []string{
	"人民代表大会常务委员会", "人民政府", "委员会", "办公室", "办公厅", "研究院", "研究所", "事务所", "检察院",
	"常委会", "联合会", "服务中心", "中心", "政府", "法院", "医院", "学院", "大学", "学校", "公司", "集团",
	"银行", "协会", "学会", "商会", "分局", "大队", "支队", "总队", "国务院", "局", "厅", "委", "署", "部", "院",
}

// weakSuffixes are suffixes that also end common words (格局, 部署, 全部), so a
// name ending in one must also name a place or level of government.
var weakSuffixes = map[string]bool{"政府": true, "局": true, "厅": true, "委": true, "署": true, "部": true, "院": true, "中心": true}

// notOrgs are words ending in an organisation suffix that are not names.
var notOrgs = []string{
	"格局", "布局", "大局", "全局", "开局", "结局", "当局", "出局", "新局", "僵局", "时局", "骗局",
	"部署", "签署", "全部", "内部", "外部", "局部", "干部", "东部", "西部", "南部", "北部", "中部", "本部", "各部",
	"庭院", "书院", "剧院", "影院",
}

// placeMarks name a place or a level of government.
const placeMarks = "省市县区镇乡州国中央党"

// leadStops are words that end the text before a name: verbs and
// prepositions that commonly precede an organisation. Names are read back
// from their suffix to the nearest of these (or the start of the clause).
var leadStops = []string{
	"根据", "按照", "依据", "参照", "对照", "依照", "经过", "会同", "联合", "协调", "配合", "牵头", "负责", "落实", "贯彻", "印发", "转发",
	"同意", "批准", "报送", "报请", "提请", "请示", "要求", "通过", "关于", "加强", "委托", "授权", "成立",
	"设立", "撤销", "发布", "公布", "召开", "参加", "指导", "支持", "推动", "建立", "组建", "审议", "上报",
	"的", "由", "经", "对", "向", "在", "为", "将", "把", "被", "请", "报", "与", "及", "并", "等", "到", "从",
	"据", "按", "以", "于", "是", "或", "暨", "同", "给", "让", "使", "令", "凡",
}

// maxOrgRunes bounds a name read back from its suffix: longer runs with no
// stop are most likely a sentence, not a name.
const maxOrgRunes = 20

type rankedAnchor struct {
	Anchor
	count int  // occurrences in the text
	first int  // byte offset of the first occurrence
	class int  // rank by kind; higher first
	ends  bool // first found in the first or last paragraph
}

// span is a byte range of a text.
type span struct{ start, end int }

// rankAnchors finds every anchor of text (and key terms shared with title)
// and orders them by salience.
func rankAnchors(title, text string) []rankedAnchor {
	found := map[string]*rankedAnchor{}
	var order []string
	// taken marks the bytes of text an anchor has claimed, so that no text
	// is read twice (the name inside a law's title is the law's).
	taken := make([]bool, len(text))
	overlaps := func(s, e int) bool { return slices.Contains(taken[s:e], true) }
	claim := func(s, e int) {
		for i := s; i < e; i++ {
			taken[i] = true
		}
	}
	add := func(kind, raw string, at int) {
		key := squash(raw)
		if key == "" {
			return
		}
		if a, ok := found[key]; ok {
			a.count++
			a.first = min(a.first, at)
			return
		}
		found[key] = &rankedAnchor{Anchor: Anchor{Text: key, Kind: kind}, first: at, count: 1}
		order = append(order, key)
	}
	byRegexp := func(re *regexp.Regexp, kind string, ok func(string, int) bool) {
		for _, m := range re.FindAllStringIndex(text, -1) {
			s, e := m[0], m[1]
			if overlaps(s, e) || !ok(text[s:e], s) {
				continue
			}
			claim(s, e)
			add(kind, text[s:e], s)
		}
	}
	for _, m := range docNoRe.FindAllStringIndex(text, -1) {
		s, e := m[0], m[1]
		// 根据穗府办〔2024〕3号: the issuer's short name follows the last stop word.
		br := strings.IndexAny(text[s:e], "〔[［【(（")
		for j := s + br; j > s; {
			if stopBefore(text[s:j]) || strings.HasSuffix(text[s:j], "和") || strings.HasSuffix(text[s:j], "文件") {
				s = j
				break
			}
			_, n := utf8.DecodeLastRuneInString(text[s:j])
			j -= n
		}
		claim(s, e)
		add(KindDocNo, text[s:e], s)
	}
	byRegexp(dateRe, KindDate, func(m string, s int) bool { return !digitBefore(text, s) && validDate(m) })
	byRegexp(numberRe, KindNumber, func(m string, s int) bool { return !alnumBefore(text, s) })
	// A law or document named in 《》 is one term; the names inside it
	// (《广东省人民政府规章立法程序规定》) are not organisations of this text.
	var terms []string
	for _, m := range bookRe.FindAllStringSubmatchIndex(text, -1) {
		terms = append(terms, text[m[2]:m[3]])
		claim(m[0], m[1])
	}
	for _, o := range findOrgs(text) {
		if !overlaps(o.start, o.end) {
			claim(o.start, o.end)
			add(KindOrg, text[o.start:o.end], o.start)
		}
	}
	// Key terms are counted wherever they occur, not only where no other
	// anchor claimed the text first.
	// Without a title, the text's own most repeated phrases stand in for
	// it; with one, a title that names nothing the body repeats leaves the
	// other anchors to carry the card (mined phrases of a statistics table
	// or a template are not what a document is about).
	fromTitle := titleTerms(title, text)
	if title == "" {
		fromTitle = repeatedTerms(text)
	}
	titled := map[string]bool{}
	for _, t := range fromTitle {
		titled[squash(t)] = title != ""
	}
	for _, t := range terms {
		if key := squash(t); found[key] == nil && key != "" {
			add(KindTerm, t, strings.Index(text, t))
			found[key].count = max(1, strings.Count(text, t))
		}
	}
	for _, t := range fromTitle {
		// A phrase the body only repeats inside other anchors (清远市 of
		// 清远市人民政府 and 清远市农业农村局) is not a subject of its own.
		key := squash(t)
		if n := freeCount(text, t, taken); found[key] == nil && key != "" && n >= 2 {
			add(KindTerm, t, strings.Index(text, t))
			found[key].count = n
		}
	}

	lead, last := leadAndLast(text)
	inEnds := func(at int) bool {
		return at >= lead.start && at < lead.end || at >= last.start && at < last.end
	}
	flatTitle := squash(title)
	out := make([]rankedAnchor, 0, len(order))
	for _, key := range order {
		a := found[key]
		a.class = class(a.Anchor, titled[key], title != "" && strings.Contains(flatTitle, key))
		a.ends = inEnds(a.first)
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		switch {
		case x.class != y.class:
			return x.class > y.class
		case x.ends != y.ends:
			return x.ends
		case x.count != y.count:
			return x.count > y.count
		}
		return x.first < y.first
	})
	return out
}

// freeCount counts the occurrences of t in text not wholly inside taken
// bytes.
func freeCount(text, t string, taken []bool) int {
	n := 0
	for off := 0; ; {
		i := strings.Index(text[off:], t)
		if i < 0 {
			return n
		}
		s, e := off+i, off+i+len(t)
		if slices.Contains(taken[s:e], false) {
			n++
		}
		off = e
	}
}

// class is an anchor's rank by kind: what names the document (its number,
// its subject, its issuer) before when and by whom, before the laws it
// cites, before how much, before the year alone.
func class(a Anchor, fromTitle, inTitle bool) int {
	switch a.Kind {
	case KindDocNo:
		return 9
	case KindTerm:
		if fromTitle {
			return 8
		}
		if inTitle {
			return 7
		}
		return 5
	case KindOrg:
		if inTitle {
			return 7
		}
		return 5
	case KindDate:
		switch {
		case strings.ContainsAny(a.Text, "日号") || strings.Count(a.Text, "-") == 2 || strings.Count(a.Text, "/") == 2 || strings.Count(a.Text, ".") == 2:
			return 6
		case strings.Contains(a.Text, "月"):
			return 3
		default:
			return 2
		}
	default: // numbers
		return 4
	}
}

func digitBefore(text string, at int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:at])
	return at > 0 && unicode.IsDigit(r)
}

func alnumBefore(text string, at int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:at])
	return at > 0 && (r == '.' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

// validDate rejects month 13 and day 32 spelled in digits.
func validDate(m string) bool {
	nums := digitRuns(m)
	switch {
	case strings.Contains(m, "年") && strings.Contains(m, "月") && len(nums) >= 2:
		return inRange(nums[1], 1, 12) && (len(nums) < 3 || inRange(nums[2], 1, 31))
	case strings.Contains(m, "月") && len(nums) == 2:
		return inRange(nums[0], 1, 12) && inRange(nums[1], 1, 31)
	case len(nums) == 3:
		return inRange(nums[1], 1, 12) && inRange(nums[2], 1, 31)
	}
	return true
}

func digitRuns(s string) []int {
	var out []int
	n, in := 0, false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n, in = n*10+int(r-'0'), true
			continue
		}
		if in {
			out = append(out, n)
		}
		n, in = 0, false
	}
	if in {
		out = append(out, n)
	}
	return out
}

func inRange(n, lo, hi int) bool { return n >= lo && n <= hi }

// findOrgs finds organisation names: a run of Han characters ending in an
// organisation suffix, read back from the suffix to the nearest stop word or
// the start of the clause. A name followed at once by a unit of its own
// (清远市人民政府办公室, 市委组织部) is read as one name.
func findOrgs(text string) []span {
	var out []span
	forEachHanRun(text, func(start int, run string) {
		floor := 0 // no name reaches back before the end of the previous one
		prevEnd := -1
		for i := 0; i < len(run); {
			suf := suffixAt(run, i)
			if suf == "" {
				_, n := utf8.DecodeRuneInString(run[i:])
				i += n
				continue
			}
			end := i + len(suf)
			if prevEnd >= 0 && subUnit(run[prevEnd:i]) {
				out[len(out)-1].end = start + end
				floor, prevEnd = end, end
			} else if s, ok := orgStart(run, floor, i, suf); ok {
				out = append(out, span{start + s, start + end})
				floor, prevEnd = end, end
			} else {
				prevEnd = -1
			}
			i = end
		}
	})
	return out
}

// subUnit reports whether between, the text from the end of one name to the
// suffix of the next, names a unit inside the first: nothing at all, or a
// few characters naming no place of their own and no stop word.
func subUnit(between string) bool {
	if between == "" {
		return true
	}
	return utf8.RuneCountInString(between) <= 4 && !strings.ContainsAny(between, placeMarks) && !stopBefore(between) && !hasStop(between)
}

func hasStop(s string) bool {
	for _, w := range leadStops {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// suffixAt returns the longest organisation suffix starting at run[i:], or
// "" when there is none, it is the start of a title (局长, 委员) or it is part
// of a common word (格局, 部署).
func suffixAt(run string, i int) string {
	for _, s := range orgSuffixes {
		if !strings.HasPrefix(run[i:], s) {
			continue
		}
		if rest := run[i+len(s):]; strings.HasPrefix(rest, "长") || strings.HasPrefix(rest, "员") {
			return ""
		}
		// 部 of 部署, 局 of 格局: the suffix is part of a common word.
		for _, w := range notOrgs {
			lo, hi := max(0, i-len(w)), min(len(run), i+len(s)+len(w))
			for at := lo; at < hi; {
				k := strings.Index(run[at:hi], w)
				if k < 0 {
					break
				}
				if ws := at + k; ws < i+len(s) && ws+len(w) > i {
					return ""
				}
				at += k + 1
			}
		}
		return s
	}
	return ""
}

// orgStart reads back from the suffix at sufAt and reports where the name
// begins, or false when what precedes is not a name.
func orgStart(run string, floor, sufAt int, suf string) (int, bool) {
	start := floor
	n := 0
	for j := sufAt; j > floor; {
		if stopBefore(run[floor:j]) && !stopInName(run[j:]) {
			start = j
			break
		}
		_, size := utf8.DecodeLastRuneInString(run[:j])
		j -= size
		n++
		if n > maxOrgRunes {
			return 0, false
		}
	}
	prefix := run[start:sufAt]
	if prefix == "" && suf != "国务院" {
		return 0, false
	}
	if weakSuffixes[suf] && !strings.ContainsAny(prefix, placeMarks) && !strings.HasSuffix(prefix, "人民") {
		return 0, false
	}
	return start, true
}

// stopInName reports whether a stop word just before name is more likely
// its first character's partner: 经济 in 市经济和信息化局.
func stopInName(name string) bool {
	for _, p := range []string{"济", "营", "贸", "信", "开"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// stopBefore reports whether s ends with a stop word.
func stopBefore(s string) bool {
	for _, w := range leadStops {
		if strings.HasSuffix(s, w) {
			return true
		}
	}
	return false
}

// forEachHanRun calls f with every maximal run of Han characters of text and
// its byte offset.
func forEachHanRun(text string, f func(int, string)) {
	start := -1
	for i, r := range text {
		if unicode.Is(unicode.Han, r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			f(start, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		f(start, text[start:])
	}
}

// maxTitleRunes bounds the part of a title searched for key terms, and
// maxMinedRunes the part of a text mined for repeated ones: real titles and
// texts are shorter, hostile ones are not.
const (
	maxTitleRunes = 64
	maxMinedRunes = 20000
)

// titleTerms are the phrases of the title (3 to 16 Han characters) that the
// body repeats at least twice: what the document is about, in its own words.
// Of the phrases of one stretch of title the one covering the most body text
// (occurrences × length) is taken first, then the stretches left on either
// side are searched again, so 安全生产专项整治 wins over 做好安全生产专项整治.
// Words that name the kind of document (实施方案, 通知) are not subjects.
func titleTerms(title, text string) []string {
	if title == "" {
		return nil
	}
	var out []string
	var search func(rs []rune)
	search = func(rs []rune) {
		best, bestI, bestL := 0, 0, 0
		for i := range rs {
			for l := 3; l <= min(16, len(rs)-i); l++ {
				t := string(rs[i : i+l])
				c := strings.Count(text, t)
				if c < 2 {
					break // a longer phrase occurs no more often
				}
				if isGeneric(t) {
					continue
				}
				if c*l > best {
					best, bestI, bestL = c*l, i, l
				}
			}
		}
		if best == 0 {
			return
		}
		search(rs[:bestI])
		out = append(out, string(rs[bestI:bestI+bestL]))
		search(rs[bestI+bestL:])
	}
	forEachHanRun(title, func(at int, run string) {
		rs := []rune(run)
		// 2025年规模以上工业: the run after a number starts with its unit.
		if digitBefore(title, at) && len(rs) > 0 && strings.ContainsRune("年月日号", rs[0]) {
			rs = rs[1:]
		}
		search(rs[:min(len(rs), maxTitleRunes)])
	})
	return out
}

// isGeneric reports whether t is a generic term or a piece of one (实施方).
func isGeneric(t string) bool {
	for g := range genericTerms {
		if strings.Contains(g, t) {
			return true
		}
	}
	return false
}

// genericTerms name a kind of document or a level of government, not what a
// document is about.
var genericTerms = map[string]bool{
	"人民政府": true, "实施方案": true, "工作方案": true, "实施意见": true, "若干措施": true, "工作要点": true,
	"有关事项": true, "管理办法": true, "行动计划": true, "的通知": true, "关于印发": true, "有关工作": true,
	"工作的通知": true, "统计公报": true, "征求意见稿": true,
}

// repeatedTerms are the text's own key terms when it has no title: Han
// phrases of 4 to 10 characters repeated at least 3 times, preferring the
// ones that cover the most text (count × length), none inside another; at
// most three.
func repeatedTerms(text string) []string {
	type cand struct {
		t     string
		count int
	}
	var cands []cand
	if rs := []rune(text); len(rs) > maxMinedRunes {
		text = string(rs[:maxMinedRunes])
	}
	for n := 10; n >= 4; n-- {
		counts := map[string]int{}
		forEachHanRun(text, func(_ int, run string) {
			rs := []rune(run)
			for i := 0; i+n <= len(rs); i++ {
				counts[string(rs[i:i+n])]++
			}
		})
		for t, c := range counts {
			if c >= 3 {
				cands = append(cands, cand{t, c})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		si, sj := cands[i].count*utf8.RuneCountInString(cands[i].t), cands[j].count*utf8.RuneCountInString(cands[j].t)
		if si != sj {
			return si > sj
		}
		return cands[i].t < cands[j].t
	})
	var out []string
	for _, c := range cands {
		clash := false
		for _, o := range out {
			if strings.Contains(o, c.t) || strings.Contains(c.t, o) {
				clash = true
				break
			}
		}
		if !clash {
			out = append(out, c.t)
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// squash removes every white space, U+3000 included.
func squash(s string) string {
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
