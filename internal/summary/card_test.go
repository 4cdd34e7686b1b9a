package summary

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGradeBoundaries: σ ≥ 0.85 with relevance ≤ 20 is green; 0.70 ≤ σ <
// 0.85, or a relevance above 20, is yellow; σ < 0.70 or no summary is red.
func TestGradeBoundaries(t *testing.T) {
	tests := []struct {
		name      string
		summary   string
		sigma     float64
		relevance int
		want      Grade
	}{
		{"σ exactly 0.85", "摘要", 0.85, 0, Green},
		{"σ just below 0.85", "摘要", 0.8499999, 0, Yellow},
		{"σ 1 at relevance exactly 20", "摘要", 1, 20, Green},
		{"σ 1 at relevance 21", "摘要", 1, 21, Yellow},
		{"σ exactly 0.70", "摘要", 0.70, 0, Yellow},
		{"σ just below 0.70", "摘要", 0.6999999, 0, Red},
		{"σ 0.70 failing relevance", "摘要", 0.70, 40, Yellow},
		{"σ below 0.70 failing relevance", "摘要", 0.5, 40, Red},
		{"no summary", "", 1, 0, Red},
		{"a summary of white space", " \u3000\n", 1, 0, Red},
	}
	for _, tt := range tests {
		if got := grade(tt.summary, tt.sigma, tt.relevance); got != tt.want {
			t.Errorf("%s: grade %s, want %s", tt.name, got, tt.want)
		}
	}
	// σ = 17/20 and 14/20 as a card computes them land on the boundaries.
	if got := grade("摘要", float64(17)/float64(20), 0); got != Green {
		t.Errorf("σ 17/20: grade %s, want green", got)
	}
	if got := grade("摘要", float64(14)/float64(20), 0); got != Yellow {
		t.Errorf("σ 14/20: grade %s, want yellow", got)
	}
}

// notice is a short government notice with every kind of anchor.
const notice = `各县（市、区）人民政府，市府直属各单位：
为推进乡村振兴，根据穗府办〔2024〕3号精神，经清远市人民政府同意，现就有关事项通知如下。
一、总体要求
到2027年，全市乡村振兴投入累计达到12.5亿元，建成300个示范村。
二、重点任务
各县（市、区）要把乡村振兴摆在突出位置，切实加强组织领导，明确责任分工，确保各项任务落到实处。
坚持问题导向和目标导向，聚焦乡村振兴中的难点堵点，制定切实可行的工作措施，每季度末报送工作进展情况。
加大财政资金统筹力度，对乡村振兴相关项目给予适当倾斜和支持，鼓励社会资本参与，形成多元投入格局。
强化督促检查，将乡村振兴工作纳入年度绩效考核，对工作不力的单位予以通报，对成效明显的予以表扬。
充分利用报刊、广播电视、政府网站等渠道，广泛宣传乡村振兴的政策措施和典型经验，营造良好氛围。
清远市农业农村局
2024年3月5日`

func noticeInput() Input {
	text := notice
	// Pad with prose the summary need not carry, so the cap is 10% of a
	// realistic length.
	for range 25 {
		text += "\n各地要结合本地实际，认真抓好贯彻落实，及时总结推广好经验好做法，遇到的重大问题及时报告。"
	}
	return Input{Title: "清远市农业农村局关于推进乡村振兴的通知", Text: text, SourceURL: "http://www.qingyuan.gov.test/qynyj/post_1.html"}
}

func TestBuild(t *testing.T) {
	in := noticeInput()
	c := Build(in)
	checkExtractive(t, "notice", in.Text, c.Summary)
	checkCard(t, "notice", c)
	if c.Summary == "" || c.Grade != Green {
		t.Errorf("a summary of a plain notice is %s (σ %.2f, relevance %d): %q, anchors %v", c.Grade, c.Sigma, c.Relevance, c.Summary, c.Anchors)
	}
	for _, a := range []string{"穗府办〔2024〕3号", "乡村振兴"} {
		if !strings.Contains(c.Summary, a) {
			t.Errorf("summary %q leaves out %s", c.Summary, a)
		}
	}
	if c.Title != in.Title || c.SourceURL != in.SourceURL || c.Simhash != Simhash(in.Text) {
		t.Errorf("card does not carry its source: %+v", c)
	}
}

// TestNoSentenceTwice: a source that repeats itself, as long reports do,
// still gets a summary that says each sentence once.
func TestNoSentenceTwice(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString("清晨的北江两岸薄雾未散，沿岸的村民已经开始一天的劳作。夜幕降临，北江两岸的灯光次第亮起。")
		if i%5 == 4 {
			b.WriteString("当地干部表示，下一步将继续围绕北江两岸做好产业、文旅和生态文章。")
		}
		b.WriteString("\n")
	}
	c := Build(Input{Title: "走进北江两岸：一条江与一座城的变迁", Text: b.String()})
	checkExtractive(t, "repetitive", b.String(), c.Summary)
	seen := map[string]bool{}
	for _, s := range strings.FieldsFunc(c.Summary, func(r rune) bool { return strings.ContainsRune("。！？；\n", r) }) {
		if seen[s] {
			t.Errorf("summary says %q twice: %q", s, c.Summary)
		}
		seen[s] = true
	}
}

// TestBuildCutsWithEllipsis: a source whose only sentence is longer than
// the cap gets its head and an ellipsis, cut where no number is split.
func TestBuildCutsWithEllipsis(t *testing.T) {
	tests := []struct{ name, text string }{
		{"clauses", "为推进乡村振兴，全市安排资金12.5亿元" + strings.Repeat("，各地各部门要高度重视并切实加强组织领导", 40) + "。"},
		// 313 characters: a 31-character cap leaves 30 for the head, which
		// would end just after 12.5, before its unit.
		{"no clause mark", strings.Repeat("甲乙", 13) + "12.5亿元" + strings.Repeat("丙丁", 140) + "。"},
	}
	for _, tt := range tests {
		c := Build(Input{Title: "关于推进乡村振兴的通知", Text: tt.text})
		checkExtractive(t, tt.name, tt.text, c.Summary)
		if !strings.HasSuffix(c.Summary, "…") {
			t.Errorf("%s: summary %q of one long sentence does not end with an ellipsis", tt.name, c.Summary)
			continue
		}
		head := strings.TrimSuffix(c.Summary, "…")
		if !strings.HasPrefix(tt.text, head) || utf8.RuneCountInString(head) < 4 {
			t.Errorf("%s: summary %q is not a head of the sentence", tt.name, c.Summary)
		}
		for _, bad := range []string{"1…", "12…", "12.…", "12.5…", "12.5亿…"} {
			if strings.HasSuffix(c.Summary, bad) {
				t.Errorf("%s: summary %q splits 12.5亿元", tt.name, c.Summary)
			}
		}
	}
}

// TestNoAnchors: a source with nothing a summary could be checked against
// gets σ 0 — the card shows title and link only.
func TestNoAnchors(t *testing.T) {
	text := strings.Repeat("这是一段没有任何可以核对的内容的文字，读者看完也不知道说了什么。\n", 20)
	c := Build(Input{Title: "无题", Text: text})
	if len(c.Anchors) != 0 || c.Sigma != 0 || c.Grade != Red {
		t.Errorf("no-anchor source: anchors %v, σ %v, grade %s; want none, 0, red", c.Anchors, c.Sigma, c.Grade)
	}
}

func TestRewrite(t *testing.T) {
	in := noticeInput()
	// A tenth of the notice's characters, white space not counted (the
	// notice is under 3,000 characters).
	limit := utf8.RuneCountInString(strings.Join(strings.Fields(in.Text), "")) / 10
	if limit >= 300 {
		t.Fatalf("fixture too long: %d characters", utf8.RuneCountInString(in.Text))
	}
	if Limit(in.Text) != limit {
		t.Errorf("Limit = %d, want %d", Limit(in.Text), limit)
	}

	_, err := Rewrite(in, strings.Repeat("字", limit+1))
	var long *TooLongError
	if !errors.As(err, &long) || long.Limit != limit || long.Length != limit+1 {
		t.Fatalf("rewrite of %d characters: error %v, want the %d-character limit", limit+1, err, limit)
	}
	if want := "摘要最多"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "字") {
		t.Errorf("error %q does not name the limit in characters", err)
	}
	if _, err := Rewrite(in, " \u3000\n"); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty rewrite: error %v, want ErrEmpty", err)
	}

	// A person's own words, carrying every core anchor and close to the
	// opening and close: green, though no sentence is from the source.
	b := Build(in)
	own := "清远市农业农村局2024年3月5日发文（穗府办〔2024〕3号），经清远市人民政府同意，推进乡村振兴：到2027年投入12.5亿元，建成300个示范村，各县（市、区）人民政府、市府直属各单位抓好落实。"
	if utf8.RuneCountInString(own) > limit {
		t.Fatalf("fixture rewrite of %d characters over the %d limit", utf8.RuneCountInString(own), limit)
	}
	c, err := Rewrite(in, own)
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	checkCard(t, "rewrite", c)
	if c.Summary != own || c.Covered != len(c.Anchors) || c.Sigma != 1 {
		t.Errorf("rewrite covers %d of %v (σ %.2f): %q", c.Covered, c.Anchors, c.Sigma, c.Summary)
	}
	if c.SourceDNA != b.SourceDNA || c.Simhash != b.Simhash || !equalAnchors(c.Anchors, b.Anchors) {
		t.Errorf("a rewrite changed what the card stands for: DNA %s→%s, simhash %#x→%#x, anchors %v→%v", b.SourceDNA, c.SourceDNA, b.Simhash, c.Simhash, b.Anchors, c.Anchors)
	}

	// Leaving anchors out lowers σ by the same gates.
	thin, err := Rewrite(in, "推进乡村振兴。")
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	checkCard(t, "thin rewrite", thin)
	if thin.Covered >= len(thin.Anchors) || thin.Grade == Green {
		t.Errorf("a rewrite with only the subject: %d of %d anchors, grade %s", thin.Covered, len(thin.Anchors), thin.Grade)
	}
}

func equalAnchors(a, b []Anchor) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSourceDNA(t *testing.T) {
	in := noticeInput()
	a := Build(in)
	if len(a.SourceDNA) != 64 || strings.Trim(a.SourceDNA, "0123456789abcdef") != "" {
		t.Fatalf("source DNA %q is not hex SHA-256", a.SourceDNA)
	}
	same := in
	same.SourceURL = "HTTP://WWW.QINGYUAN.GOV.TEST:80/qynyj/post_1.html#top"
	if b := Build(same); b.SourceDNA != a.SourceDNA {
		t.Errorf("the same page under another spelling of its URL has DNA %s, want %s", b.SourceDNA, a.SourceDNA)
	}
	edited := in
	edited.Text = strings.Replace(in.Text, "12.5亿元", "13.5亿元", 1)
	if b := Build(edited); b.SourceDNA == a.SourceDNA {
		t.Errorf("an edited text kept its DNA")
	}
	moved := in
	moved.SourceURL = "http://www.qingyuan.gov.test/qynyj/post_2.html"
	if b := Build(moved); b.SourceDNA == a.SourceDNA {
		t.Errorf("another page with the same text kept its DNA")
	}
}
