package summary

import (
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	text := "　　第一句。第二句！“引语。”第三句？\n标题\n甲；乙; 丙\n\n  末行  "
	var got []string
	for _, s := range splitSentences(text) {
		got = append(got, s.text)
	}
	want := []string{"第一句。", "第二句！", "“引语。”", "第三句？", "标题", "甲；", "乙;", "丙", "末行"}
	if !slices.Equal(got, want) {
		t.Errorf("sentences %q, want %q", got, want)
	}
}

// TestReference: relevance is judged against the first and last paragraphs
// of running prose, not a salutation, heading, table row or signature.
func TestReference(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"a notice",
			"各县（市、区）人民政府，市府直属各单位：\n为推进乡村振兴，现就有关事项通知如下。\n一、总体要求\n到2027年，体系基本健全。\n序号 任务 单位\n1 第一阶段 市教育局\n加大资金支持。\n清远市农业农村局\n2024年3月5日",
			"为推进乡村振兴，现就有关事项通知如下。\n加大资金支持。"},
		{"one paragraph", "标题\n只有一段话。\n落款", "只有一段话。"},
		{"no prose at all", "标题\n表格 一行\n落款", "标题\n落款"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := reference(tt.text); got != tt.want {
			t.Errorf("%s: reference %q, want %q", tt.name, got, tt.want)
		}
	}
}
