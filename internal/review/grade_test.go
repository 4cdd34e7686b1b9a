package review

import (
	"errors"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/summary"
)

// TestGradeNeedsNoSourceText: a card keeps what grading needs, so a
// rewrite is graded from the card alone — as a summary-access site's card
// must be, its source text never kept — and the verdict is the summary
// package's own.
func TestGradeNeedsNoSourceText(t *testing.T) {
	text := "清远市农业农村局关于2024年乡村振兴示范村建设的通知\n" +
		"各县（市、区）人民政府，市府直属各单位：\n" +
		"为推进乡村振兴，根据《广东省乡村振兴促进条例》，经清远市人民政府同意，现将有关事项通知如下。\n" +
		strings.Repeat("到2027年，全市投入12.5亿元，建成300个示范村，农村居民人均可支配收入年均增长8%以上。\n", 3) +
		strings.Repeat("各地要加强组织领导，压实工作责任，确保各项任务落到实处，定期报送工作进展情况。\n", 12) +
		"清远市农业农村局\n2024年3月5日\n"
	c := summary.Build(summary.Input{Title: "关于2024年乡村振兴示范村建设的通知", Text: text, SourceURL: "http://www.gdqy.gov.test/a.html"})
	card := &model.SummaryCard{Summary: c.Summary, ReferenceSimhash: c.Reference, SummaryLimit: c.Limit}
	for _, a := range c.Anchors {
		card.Anchors = append(card.Anchors, model.CardAnchor{Text: a.Text, Kind: a.Kind})
	}
	if len(card.Anchors) < 2 {
		t.Fatalf("fixture has %d core anchors; want a few", len(card.Anchors))
	}
	rw, missing, err := Grade(card, c.Summary)
	if err != nil || rw.Grade != string(c.Grade) || rw.Sigma != c.Sigma || rw.Relevance != c.Relevance || len(missing) != len(c.Anchors)-c.Covered {
		t.Fatalf("the machine's own summary graded %+v, missing %v, %v; card %+v", rw, missing, err, c)
	}
	rw, missing, err = Grade(card, "本文发布了一项通知。")
	if err != nil || rw.Grade == model.GradeGreen || len(missing) == 0 {
		t.Fatalf("a text with no anchor graded %+v, missing %v, %v", rw, missing, err)
	}
	var long *summary.TooLongError
	if _, _, err := Grade(card, strings.Repeat("字", card.SummaryLimit+1)); !errors.As(err, &long) || long.Limit != c.Limit {
		t.Fatalf("a text over the card's cap: %v", err)
	}
}
