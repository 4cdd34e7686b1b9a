package corpus

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheckQA: each check holds a revision back with its reason, and a
// sound government page passes all of them.
func TestCheckQA(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	body := strings.Repeat("为进一步做好政务公开工作，现将有关事项通知如下。", 4)
	good := QAInput{Title: "关于做好2026年政务公开工作的通知", Text: body, Access: "full", PublishDate: "2026-11-20",
		Publisher: "清远市人民政府办公室", IndexNo: "007194285/2026-00123", CMSAdapter: true, CardGrade: "green", Now: now}
	if fails := CheckQA(good); len(fails) != 0 {
		t.Fatalf("a sound page failed: %v", fails)
	}
	cases := []struct {
		name string
		edit func(*QAInput)
		want string
	}{
		{"no title", func(q *QAInput) { q.Title = "  " }, "标题为空"},
		{"long title", func(q *QAInput) { q.Title = strings.Repeat("长", 301) }, "标题过长"},
		{"short body", func(q *QAInput) { q.Text = strings.Repeat("短", 59) }, "正文过短"},
		{"short summary", func(q *QAInput) { q.Access, q.Text = "summary", strings.Repeat("短", 19) }, "摘要过短"},
		{"replacement character", func(q *QAInput) { q.Text = body + "\uFFFD" }, "无法解码"},
		{"round-trip garbage", func(q *QAInput) { q.Text = body + "锟斤拷锟斤拷" }, "疑似乱码"},
		{"utf-8 read as latin-1", func(q *QAInput) {
			q.Title, q.Text = "å…³äºŽåšå¥½æ”¿åŠ¡å…¬å¼€å·¥ä½œçš„é€šçŸ¥", strings.Repeat("æ”¿åŠ¡å…¬å¼€å·¥ä½œ", 20)
		}, "按西文编码读取"},
		{"no date", func(q *QAInput) { q.PublishDate = "" }, "缺少发布日期"},
		{"bad date", func(q *QAInput) { q.PublishDate = "2026-13-01" }, "无法识别"},
		{"before 1949-10-01", func(q *QAInput) { q.PublishDate = "1949-09-30" }, "早于 1949-10-01"},
		{"in the future", func(q *QAInput) { q.PublishDate = "2026-12-09" }, "在未来"},
		{"gkmlpt without 索引号", func(q *QAInput) { q.IndexNo = "" }, "索引号"},
		{"gkmlpt without 发布机构", func(q *QAInput) { q.Publisher = "" }, "发布机构"},
		{"template page without publisher or source", func(q *QAInput) { q.CMSAdapter, q.Publisher, q.Source = false, "", "" }, "缺少发布机构或来源"},
		{"red card", func(q *QAInput) { q.CardGrade = "red" }, "红色"},
	}
	for _, c := range cases {
		in := good
		c.edit(&in)
		fails := CheckQA(in)
		if !slices.ContainsFunc(fails, func(f string) bool { return strings.Contains(f, c.want) }) {
			t.Errorf("%s: failed %v, want a failure naming %q", c.name, fails, c.want)
		}
	}
	// The edges pass: exactly 60 characters, 1949-10-01, a template page
	// with only a source, two days ahead of the clock (a time zone away).
	for _, edit := range []func(*QAInput){
		func(q *QAInput) { q.Text = strings.Repeat("正", 60) },
		func(q *QAInput) { q.PublishDate = "1949-10-01" },
		func(q *QAInput) { q.CMSAdapter, q.Publisher, q.Source = false, "", "清远日报" },
		func(q *QAInput) { q.PublishDate = "2026-12-07" },
	} {
		in := good
		edit(&in)
		if fails := CheckQA(in); len(fails) != 0 {
			t.Errorf("an edge case failed: %v (%+v)", fails, in)
		}
	}
}
