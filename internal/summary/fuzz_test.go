package summary

import (
	"testing"
	"unicode/utf8"
)

// FuzzBuild: whatever a page holds, its card's summary is the page's own
// sentences in order, within the length cap, and grading it by the card's
// gauge agrees with the card; nothing panics.
func FuzzBuild(f *testing.F) {
	for _, seed := range []string{
		"清远市人民政府办公室关于印发《清远市促进就业实施方案》的通知\n清府办〔2024〕12号\n各县（市、区）人民政府：现将方案印发给你们，请认真贯彻执行。\n到2026年，全市新增就业3万人以上，投入资金12.5亿元。\n清远市人民政府办公室\n2024年3月5日",
		"", "。。。", "\u3000\u3000\n\n", "a b c 1 2 3", "第一句！第二句？第三句；第四句。",
		string([]byte{0xff, 0xfe, 0xe4}),
	} {
		f.Add("通知", seed)
	}
	f.Fuzz(func(t *testing.T, title, text string) {
		if !utf8.ValidString(text) || !utf8.ValidString(title) {
			t.Skip("page text reaches Build as UTF-8 (transcoded first)")
		}
		c := Build(Input{Title: title, Text: text, SourceURL: "http://www.gov.test/a.html"})
		checkExtractive(t, "fuzz", text, c.Summary)
		if c.Summary == "" {
			return
		}
		v, err := Regrade(Gauge{Anchors: c.Anchors, Reference: c.Reference, Limit: c.Limit}, c.Summary)
		if err != nil {
			t.Fatalf("the card's own summary %q refused by its gauge: %v", c.Summary, err)
		}
		if v.Grade != c.Grade || v.Covered != c.Covered || v.Relevance != c.Relevance {
			t.Fatalf("gauge grades %+v, card %+v", v, c)
		}
	})
}
