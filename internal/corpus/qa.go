package corpus

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"zhizhi/internal/model"
)

// QA thresholds. A full-access body shorter than minBodyRunes is not a
// document (a navigation page, an error page); a summary shorter than
// minSummaryRunes says nothing.
const (
	minBodyRunes    = 60
	minSummaryRunes = 20
	maxTitleRunes   = 300
)

// earliestDate is the first day a People's Republic government document
// can carry.
var earliestDate = time.Date(1949, 10, 1, 0, 0, 0, 0, time.UTC)

// QAInput is what a revision's checks look at.
type QAInput struct {
	Title       string
	Text        string // the normalized text
	Access      string // full | summary
	PublishDate string // YYYY-MM-DD or ""
	Publisher   string
	Source      string // 来源 as written on the page
	IndexNo     string
	CMSAdapter  bool   // a CMS whose pages always carry 索引号 and 发布机构
	CardGrade   string // the summary card's grade, "" when there is none
	Now         time.Time
}

// CheckQA returns the checks rev failed, in Chinese for the console; none
// means it passes.
func CheckQA(in QAInput) []string {
	var fails []string
	title := strings.TrimSpace(in.Title)
	switch n := utf8.RuneCountInString(title); {
	case n == 0:
		fails = append(fails, "标题为空")
	case n > maxTitleRunes:
		fails = append(fails, "标题过长（超过 300 字）")
	}
	body := utf8.RuneCountInString(strings.TrimSpace(in.Text))
	if in.Access == model.AccessSummary {
		if body < minSummaryRunes {
			fails = append(fails, "摘要过短（少于 20 字）")
		}
	} else if body < minBodyRunes {
		fails = append(fails, "正文过短（少于 60 字）")
	}
	if p := encodingProblem(title + "\n" + in.Text); p != "" {
		fails = append(fails, p)
	}
	switch d, err := time.Parse("2006-01-02", in.PublishDate); {
	case in.PublishDate == "":
		fails = append(fails, "缺少发布日期")
	case err != nil:
		fails = append(fails, "发布日期无法识别："+in.PublishDate)
	case d.Before(earliestDate):
		fails = append(fails, "发布日期早于 1949-10-01")
	case !in.Now.IsZero() && d.After(in.Now.Add(48*time.Hour)):
		fails = append(fails, "发布日期在未来："+in.PublishDate)
	}
	if in.CMSAdapter {
		if strings.TrimSpace(in.IndexNo) == "" {
			fails = append(fails, "缺少公开属性：索引号")
		}
		if strings.TrimSpace(in.Publisher) == "" {
			fails = append(fails, "缺少公开属性：发布机构")
		}
	} else if strings.TrimSpace(in.Publisher) == "" && strings.TrimSpace(in.Source) == "" {
		fails = append(fails, "缺少发布机构或来源")
	}
	if in.CardGrade == model.GradeRed {
		fails = append(fails, "摘要卡片质量为红色")
	}
	return fails
}

// encodingProblem names a text's encoding damage: replacement characters
// (bytes that did not decode), the classic GBK/UTF-8 round-trip garbage,
// or UTF-8 read as Latin-1 (many of U+00C0–U+00FF among CJK text).
func encodingProblem(s string) string {
	if strings.ContainsRune(s, utf8.RuneError) {
		return "含有无法解码的字符（编码错误）"
	}
	if strings.Contains(s, "锟斤拷") || strings.Contains(s, "烫烫烫") || strings.Contains(s, "屯屯屯") {
		return "疑似乱码（编码转换错误）"
	}
	var latin, letters int
	for _, r := range s {
		switch {
		case r >= 0xC0 && r <= 0xFF:
			latin++
			letters++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if letters >= 20 && latin*10 > letters {
		return "疑似乱码（按西文编码读取）"
	}
	return ""
}
