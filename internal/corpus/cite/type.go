package cite

import (
	"regexp"
	"strings"
)

// CSL item types a corpus work can have.
const (
	TypeLegislation = "legislation" // 法律、行政法规、地方性法规、规章、司法解释
	TypeRegulation  = "regulation"  // 规范性文件 and other 公文 (通知、意见、决定 …)
	TypeReport      = "report"      // 规划、计划、方案、报告、总结、公报、白皮书
	TypeWebpage     = "webpage"     // everything else: 解读、新闻、图解、问答 …
)

// Type is the CSL item type of w, decided by the first rule that applies
// (docs/citations.md has the same table with examples):
//
//  1. Category names a genre: containing 解读/图解/新闻/动态/要闻/问答/
//     回应/访谈 → webpage; containing 规范性文件 → regulation; ending in
//     法律/法规/规章/条例/司法解释 → legislation (but not the mixed portal
//     column 政策法规); ending in 规划/计划/报告/总结/公报/白皮书/年报 →
//     report (by the end, so a topic like 人口与计划生育 names no genre).
//  2. 文号 is an order (…令第N号, 主席令, 国务院令, 部令2024年第1号): the
//     document is a law, an administrative regulation or a 规章 →
//     legislation.
//  3. The title's genre, read from its end after dropping trailing
//     parentheticals such as （试行）（2021年修订）（征求意见稿） and a
//     subtitle after ——:
//     a. a wrapper 印发/转发/批转/发布/颁布/公布/修改/废止 X 的通知/公告/
//     决定/令 takes the genre of X (关于印发《…规划》的通知 → report,
//     关于修改《…法》的决定 → legislation), or regulation when X names
//     none;
//     b. …法 (not 办法/方法/执法 …), 法典, 条例, 法规, 规章, …法实施细则,
//     司法解释 (…的解释), 人大 决定/决议 → legislation;
//     c. 规划, 计划, 纲要, 方案, 要点, 报告, 总结, 公报, 白皮书, 年报,
//     预算, 决算 → report;
//     d. 通知, 通报, 意见, 决定, 命令, 公告, 通告, 批复, 函, 请示, 纪要,
//     议案, 决议, 办法, 规定, 细则, 规则, 措施, 指引, 指南, 规范, 制度,
//     守则, 清单, 目录, 标准 → regulation.
//  4. Category is a generic document column (文件, 公文, 政策, 通知公告)
//     or the work has a 文号 → regulation.
//  5. Otherwise → webpage.
//
// A title ending in 》 (一图读懂《…规划》) is about a document rather than
// the document itself, and falls through to webpage.
func Type(w Work) string {
	if t := categoryType(strings.TrimSpace(w.Category)); t != "" {
		return t
	}
	if orderNo.MatchString(w.DocNo) {
		return TypeLegislation
	}
	if t := titleType(w.Title); t != "" {
		return t
	}
	cat := w.Category
	for _, g := range []string{"文件", "公文", "政策", "通知公告"} {
		if strings.Contains(cat, g) {
			return TypeRegulation
		}
	}
	if strings.TrimSpace(w.DocNo) != "" {
		return TypeRegulation
	}
	return TypeWebpage
}

// orderNo matches the 文号 of a 令: 国务院令第752号, 中华人民共和国主席令
// 第八十四号, 交通运输部令2024年第1号, 上海市人民政府令第12号.
var orderNo = regexp.MustCompile(`令\s*[（(〔\[]?\s*(第|\d{4}\s*年)`)

func categoryType(cat string) string {
	if cat == "" {
		return ""
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(cat, w) {
				return true
			}
		}
		return false
	}
	ends := func(words ...string) bool {
		for _, w := range words {
			if strings.HasSuffix(cat, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("解读", "图解", "新闻", "动态", "要闻", "问答", "回应", "访谈"):
		return TypeWebpage
	case has("规范性文件"):
		return TypeRegulation
	case has("政策法规"):
		// A portal column that mixes laws, notices and plans: the title
		// decides.
		return ""
	case ends("法律", "法规", "规章", "条例", "司法解释"):
		return TypeLegislation
	case ends("规划", "计划", "报告", "总结", "公报", "白皮书", "年报"):
		// By the end only: a topic such as 人口与计划生育 names no genre.
		return TypeReport
	}
	return ""
}

// trailingNote is a parenthetical at the end of a title: （试行）,
// (2021年修订), 〔2024〕, 【征求意见稿】.
var trailingNote = regexp.MustCompile(`\s*(（[^（）]*）|\([^()]*\)|〔[^〔〕]*〕|【[^【】]*】|\[[^\[\]]*\])\s*$`)

// wrapper is a document that issues, forwards, amends or repeals another.
var wrapper = regexp.MustCompile(`(?:印发|转发|批转|发布|颁布|公布|修改|废止)(.+)的(?:通知|公告|通告|决定|命令|令|函)$`)

// notLaw are words ending in 法 that do not name a law.
var notLaw = []string{"办法", "方法", "做法", "看法", "想法", "说法", "写法", "用法", "手法", "疗法", "语法", "算法",
	"司法", "执法", "违法", "守法", "普法", "立法", "依法", "合法", "非法", "新法", "技法", "章法"}

var (
	reportEnds     = []string{"规划", "计划", "纲要", "方案", "要点", "报告", "总结", "公报", "白皮书", "年报", "预算", "决算"}
	regulationEnds = []string{"通知", "通报", "意见", "决定", "命令", "公告", "通告", "批复", "函", "请示", "纪要", "议案", "决议",
		"办法", "规定", "细则", "规则", "措施", "指引", "指南", "规范", "制度", "守则", "清单", "目录", "标准"}
)

// stripTitle drops what does not tell the genre: white space, closing
// punctuation and trailing parentheticals.
func stripTitle(t string) string {
	t = strings.TrimSpace(t)
	for {
		t = strings.TrimRight(t, " 　。.")
		s := trailingNote.ReplaceAllString(t, "")
		if s == t || s == "" {
			return t
		}
		t = s
	}
}

// titleType reads the genre from the end of a title; "" when it names none.
func titleType(title string) string {
	// A subtitle after a dash (政府工作报告——2024年3月5日在…上) says
	// where or when, not what.
	if i := strings.Index(title, "——"); i > 0 {
		title = title[:i]
	}
	t := stripTitle(title)
	if t == "" {
		return ""
	}
	// A title wholly in 《》 is the document's own name.
	if strings.HasPrefix(t, "《") && strings.HasSuffix(t, "》") && strings.Count(t, "《") == 1 {
		t = stripTitle(strings.TrimSuffix(strings.TrimPrefix(t, "《"), "》"))
	}
	if m := wrapper.FindStringSubmatch(t); m != nil {
		inner := stripTitle(strings.Trim(m[1], "《》\"“”'‘’ "))
		if g := genre(inner); g != "" {
			return g
		}
		return TypeRegulation
	}
	return genre(t)
}

// genre classifies a document name by its last words.
func genre(t string) string {
	if strings.HasSuffix(t, "》") {
		return ""
	}
	end := func(words []string) bool {
		for _, w := range words {
			if strings.HasSuffix(t, w) {
				return true
			}
		}
		return false
	}
	switch {
	case isLaw(t):
		return TypeLegislation
	case end([]string{"条例", "法典", "法规", "规章"}):
		return TypeLegislation
	case strings.HasSuffix(t, "实施细则") && (isLaw(strings.TrimSuffix(t, "实施细则")) || strings.HasSuffix(strings.TrimSuffix(t, "实施细则"), "条例")):
		return TypeLegislation
	case strings.HasSuffix(t, "的解释") || strings.HasSuffix(t, "司法解释") || strings.HasSuffix(t, "立法解释"):
		return TypeLegislation
	case strings.Contains(t, "人民代表大会") && end([]string{"决定", "决议"}):
		return TypeLegislation
	case end(reportEnds):
		return TypeReport
	case end(regulationEnds):
		return TypeRegulation
	}
	return ""
}

// isLaw reports whether t is the name of a law: it ends in 法 and not in
// a word like 办法 or 执法.
func isLaw(t string) bool {
	if !strings.HasSuffix(t, "法") {
		return false
	}
	for _, w := range notLaw {
		if strings.HasSuffix(t, w) {
			return false
		}
	}
	return true
}
