package summary

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAnchors: examples written from the rules for each kind of anchor,
// including words that only look like one.
func TestAnchors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Anchor // each must be found, with its kind
		not  []string // none of these may be an anchor
	}{
		{"dates in every spelling",
			"2024年3月5日印发，2024-03-05起施行，3月5日前报送，二〇二四年三月五日成文，2024年6月底前完成，到2027年基本健全。",
			[]Anchor{{"2024年3月5日", "date"}, {"2024-03-05", "date"}, {"3月5日", "date"}, {"二〇二四年三月五日", "date"}, {"2024年6月", "date"}, {"2027年", "date"}},
			nil},
		{"a date with no such month is not a date",
			"2024年13月5日。",
			nil,
			[]string{"2024年13月5日", "13月5日"}},
		{"numbers with units",
			"总投资12.5亿元，其中财政资金300万元，增长15%，用地2000平方米，新建3个站点，10个工作日内办结。",
			[]Anchor{{"12.5亿元", "number"}, {"300万元", "number"}, {"15%", "number"}, {"2000平方米", "number"}, {"3个", "number"}, {"10个工作日", "number"}},
			nil},
		{"numbers without a unit, or inside a code, are not anchors",
			"联系电话：0763-3362000，邮编511500，采购X200台式电脑。",
			nil,
			[]string{"0763-3362000", "511500", "3362000", "200台"}},
		{"document numbers",
			"根据穗府办〔2024〕3号文件和粤府函[2023]12号的要求，参照国办发（2022）15号。",
			[]Anchor{{"穗府办〔2024〕3号", "docno"}, {"粤府函[2023]12号", "docno"}, {"国办发（2022）15号", "docno"}},
			[]string{"3号", "12号"}},
		{"organisations",
			"经清远市人民政府同意，由清远市发展和改革局牵头，市教育局、市财政局配合，清远市人民政府办公室印发，国家统计局指导。",
			[]Anchor{{"清远市人民政府", "org"}, {"清远市发展和改革局", "org"}, {"市教育局", "org"}, {"市财政局", "org"}, {"清远市人民政府办公室", "org"}, {"国家统计局", "org"}},
			[]string{"经清远市人民政府", "由清远市发展和改革局"}},
		{"words that end like an organisation",
			"形成政府引导、市场运作的多元投入格局，做好工作部署，以人民为中心，全部完成。",
			nil,
			[]string{"形成政府", "多元投入格局", "投入格局", "工作部署", "为中心", "中心", "全部"}},
		{"a name inside a law's title is the law's, not an organisation",
			"根据《广东省人民政府规章立法程序规定》等有关规定。",
			[]Anchor{{"广东省人民政府规章立法程序规定", "term"}},
			[]string{"广东省人民政府"}},
		{"repeated phrases are key terms",
			"推进乡村振兴。乡村振兴要抓产业。乡村振兴要抓人才。各地要把乡村振兴放在首位。",
			[]Anchor{{"乡村振兴", "term"}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Anchors(tt.text)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("anchor %v not found in %v", w, got)
				}
			}
			for _, n := range tt.not {
				for _, g := range got {
					if g.Text == n {
						t.Errorf("%q taken as a %s anchor", n, g.Kind)
					}
				}
			}
		})
	}
}

// TestCoreAnchorsAreBounded: the core anchors a summary is judged on are the
// most salient few — one per 30 characters of the summary's budget — so a
// 10% summary can carry them; a document's number and subject come first.
func TestCoreAnchorsAreBounded(t *testing.T) {
	var text string
	for i := range 60 {
		text += fmt.Sprintf("根据穗府办〔2024〕3号，推进乡村振兴，第%d批项目投资%d.5亿元，由清远市发展和改革局负责，于2024年3月5日前完成。\n", i, i+10)
	}
	c := Build(Input{Title: "关于推进乡村振兴的通知", Text: text})
	// 60 lines of about 60 characters: a 300-character budget, 10 anchors.
	if len(c.Anchors) != 10 {
		t.Errorf("%d core anchors for a 300-character summary, want 10: %v", len(c.Anchors), c.Anchors)
	}
	if len(c.Anchors) < 2 || c.Anchors[0] != (Anchor{"穗府办〔2024〕3号", "docno"}) || c.Anchors[1] != (Anchor{"推进乡村振兴", "term"}) {
		t.Errorf("core anchors %v: want the document number, then the subject", c.Anchors)
	}
	mid := strings.Join(strings.Split(text, "\n")[:20], "\n")
	// About 1,200 characters: a tenth of it is the budget, one anchor per
	// 30 characters of that.
	if want := utf8.RuneCountInString(mid) / 10 / 30; len(Build(Input{Title: "关于推进乡村振兴的通知", Text: mid}).Anchors) != want || want < 3 {
		t.Errorf("%d core anchors for a %d-character budget, want %d", len(Build(Input{Title: "关于推进乡村振兴的通知", Text: mid}).Anchors), Limit(mid), want)
	}
	head := strings.Join(strings.Split(text, "\n")[:3], "\n")
	short := Build(Input{Title: "关于推进乡村振兴的通知", Text: head})
	// About 180 characters: an 18-character budget holds one anchor.
	if len(short.Anchors) != 1 {
		t.Errorf("%d core anchors for a %d-character budget, want 1: %v", len(short.Anchors), Limit(head), short.Anchors)
	}
}
