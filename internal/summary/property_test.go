package summary

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Pieces of government prose for the random texts below.
var (
	genWords   = []string{"加强", "耕地保护", "工作", "推进", "高标准农田", "建设", "优化", "营商环境", "各地", "各部门", "要", "切实", "组织领导", "确保", "落实", "安全生产", "乡村振兴", "数字政府", "群众", "服务", "项目", "资金", "统筹", "机制", "考核"}
	genAnchors = []string{"2024年3月5日", "2026-08-20", "3月5日", "二〇二四年三月五日", "2027年", "12.5亿元", "300万元", "15%", "2000平方米", "3个", "10个工作日",
		"穗府办〔2024〕3号", "粤府函[2023]12号", "清远市人民政府", "清远市发展和改革局", "市教育局", "《中华人民共和国统计法》", "“一网通办”"}
	genClause = []string{"，", "、", "：", "（", "）", " ", "\u3000"}
	genEnd    = []string{"。", "！", "？", "；", "。”", "……", "!", "?", ";", ""}
)

// simLike writes a random text shaped like a government page: headings,
// paragraphs of sentences with anchors, a table row, a signature.
func simLike(r *rand.Rand) (title, text string) {
	var b strings.Builder
	paras := r.IntN(30)
	for p := 0; p < paras; p++ {
		switch r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "%s、%s\n", []string{"一", "二", "三"}[r.IntN(3)], genWords[r.IntN(len(genWords))])
			continue
		case 1:
			fmt.Fprintf(&b, "%d %s %s %s\n", p, genWords[r.IntN(len(genWords))], genAnchors[r.IntN(len(genAnchors))], genAnchors[r.IntN(len(genAnchors))])
			continue
		}
		if r.IntN(3) == 0 {
			b.WriteString("\u3000\u3000")
		}
		for range 1 + r.IntN(6) {
			for range 2 + r.IntN(12) {
				switch k := r.IntN(10); {
				case k < 6:
					b.WriteString(genWords[r.IntN(len(genWords))])
				case k < 8:
					b.WriteString(genAnchors[r.IntN(len(genAnchors))])
				default:
					b.WriteString(genClause[r.IntN(len(genClause))])
				}
			}
			b.WriteString(genEnd[r.IntN(len(genEnd))])
		}
		b.WriteString("\n")
	}
	if r.IntN(2) == 0 {
		b.WriteString("清远市发展和改革局\n2026年8月20日")
	}
	return genWords[r.IntN(len(genWords))] + genWords[r.IntN(len(genWords))] + "的通知", b.String()
}

// hostile are texts no portal should serve and some will.
func hostile() map[string]string {
	long := strings.Repeat("加强耕地保护工作推进高标准农田建设", 400)
	return map[string]string{
		"empty":              "",
		"white space":        " \n\t\n  ",
		"ideographic spaces": "\u3000\u3000\u3000\n\u3000",
		"no punctuation":     long,
		"one huge sentence":  strings.Repeat("各地各部门要高度重视，切实加强组织领导，", 300) + "确保落实。",
		"only numbers":       strings.Repeat("2024 12.5 300 15 2000 3 ", 300),
		"numbers with units": strings.Repeat("12.5亿元300万元15%2000平方米3个", 200),
		"mixed ascii":        strings.Repeat("Hello, world. This is zhizhi! 中文混排；ABC-123 test? ", 100),
		"only end marks":     strings.Repeat("。！？；\n", 500),
		"ellipses":           strings.Repeat("……", 500) + "等等……",
		"closers":            strings.Repeat("”）》】", 300),
		"one line per char":  strings.Repeat("字\n", 1000),
		"invalid utf-8":      strings.Repeat("加强\xff\xfe耕地。", 200),
		"cut in a number":    strings.Repeat("甲", 95) + "12345678901234567890亿元的投资。" + strings.Repeat("乙", 2000),
		"emoji and accents":  strings.Repeat("Café 🚀 naïve résumé；清远市人民政府。", 100),
	}
}

// TestSummaryIsExtractive: on random government-like texts and hostile ones,
// every summary is made of pieces of its source and keeps the length cap,
// and nothing panics.
func TestSummaryIsExtractive(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(11, 2026))
	for i := range 400 {
		title, text := simLike(r)
		c := Build(Input{Title: title, Text: text, SourceURL: "http://www.qingyuan.gov.test/a.html", FetchedAt: now})
		name := fmt.Sprintf("random text %d", i)
		checkExtractive(t, name, text, c.Summary)
		checkCard(t, name, c)
	}
	for name, text := range hostile() {
		for _, title := range []string{"", "加强耕地保护工作", text} {
			c := Build(Input{Title: title, Text: text})
			checkExtractive(t, name, text, c.Summary)
			checkCard(t, name, c)
			if _, err := Rewrite(Input{Title: title, Text: text}, text); utf8.RuneCountInString(strings.TrimSpace(text)) > Limit(text) && err == nil {
				t.Errorf("%s: a rewrite as long as the source was accepted", name)
			}
		}
	}
}

// checkCard fails t unless the card's numbers agree with each other and the
// gates: σ is Covered over the core anchors, and the grade follows 0.85,
// 0.70 and 20.
func checkCard(t *testing.T, name string, c Card) {
	t.Helper()
	if c.Covered < 0 || c.Covered > len(c.Anchors) {
		t.Errorf("%s: %d of %d anchors covered", name, c.Covered, len(c.Anchors))
	}
	want := 0.0
	if len(c.Anchors) > 0 {
		want = float64(c.Covered) / float64(len(c.Anchors))
	}
	if c.Sigma != want {
		t.Errorf("%s: σ %v, want %d/%d", name, c.Sigma, c.Covered, len(c.Anchors))
	}
	g := Yellow
	switch {
	case strings.TrimSpace(c.Summary) == "" || c.Sigma < 0.70:
		g = Red
	case c.Sigma >= 0.85 && c.Relevance <= 20:
		g = Green
	}
	if c.Grade != g {
		t.Errorf("%s: grade %s with σ %.2f and relevance %d, want %s", name, c.Grade, c.Sigma, c.Relevance, g)
	}
	if c.Relevance < 0 || c.Relevance > 64 {
		t.Errorf("%s: relevance %d", name, c.Relevance)
	}
}
