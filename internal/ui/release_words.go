package ui

import (
	"regexp"
	"strings"

	"zhizhi/internal/corpus"
)

// verifyRow is one problem a verification found, as the page shows it:
// where, what in Chinese, and the check's own words kept for the record.
type verifyRow struct {
	Where, What, Raw string
}

// verifyWords say the corpus's verification problems in Chinese; the
// first pattern that matches wins.
var verifyWords = []struct {
	re   *regexp.Regexp
	text string
}{
	{regexp.MustCompile(`^cannot be read`), "无法读取（文件缺失或损坏）"},
	{regexp.MustCompile(`^has (\d+) bytes, the manifest (\d+)$`), "大小为 $1 字节，清单记录为 $2 字节：文件在生成后被改动过"},
	{regexp.MustCompile(`^SHA-256 is \S+, the database recorded`), "清单的 SHA-256 与数据库记录不符：清单在生成后被改动过"},
	{regexp.MustCompile(`^SHA-256 is \S+, the manifest`), "SHA-256 与清单不符：文件内容在生成后被改动过"},
	{regexp.MustCompile(`^is not valid JSON`), "不是有效的 JSON"},
	{regexp.MustCompile(`^names release (\S+) with (\d+) works, the database (\S+) with (\d+)$`), "清单写的是发布 $1（$2 件作品），数据库记录的是 $3（$4 件）"},
	{regexp.MustCompile(`^is not in the manifest$`), "不在清单中：发布生成后被加入的文件"},
	{regexp.MustCompile(`^lists (\d+) works, the manifest (\d+)$`), "列出 $1 件作品，清单记录为 $2 件"},
	{regexp.MustCompile(`^its text is not at (\S+) line (\d+)$`), "正文不在分片 $1 的第 $2 行"},
	{regexp.MustCompile(`^text SHA-256 is \S+, its revision (\d+) recorded`), "正文的 SHA-256 与第 $1 版修订的记录不符：正文被改动过"},
	{regexp.MustCompile(`^revision (\d+) in the database has text`), "数据库中第 $1 版修订的正文或快照与发布所记不符"},
	{regexp.MustCompile(`^revision (\d+): `), "第 $1 版修订无法读取"},
	{regexp.MustCompile(`^snapshot \S+ text: SHA-256`), "快照正文的 SHA-256 与记录不符：快照被改动过"},
	{regexp.MustCompile(`^snapshot \S+ text: `), "快照正文无法读取"},
	{regexp.MustCompile(`^snapshot \S+ WARC: SHA-256`), "快照 WARC 文件的 SHA-256 与记录不符：快照被改动过"},
	{regexp.MustCompile(`^snapshot \S+ WARC: `), "快照 WARC 文件校验未通过（记录摘要不符或文件损坏）"},
	{regexp.MustCompile(`^snapshot \S+: `), "快照无法读取"},
	{regexp.MustCompile(`^indexes (\d+) works, the release has (\d+)$`), "检索索引收录 $1 件作品，发布中有 $2 件"},
}

// verifyWhat says one problem in Chinese.
func verifyWhat(what string) string {
	for _, w := range verifyWords {
		if m := w.re.FindStringSubmatchIndex(what); m != nil {
			return string(w.re.ExpandString(nil, w.text, what, m))
		}
	}
	return "校验未通过（详见原文）"
}

func verifyRows(problems []corpus.VerifyProblem) []verifyRow {
	out := make([]verifyRow, 0, len(problems))
	for _, p := range problems {
		out = append(out, verifyRow{Where: p.Where, What: verifyWhat(p.What), Raw: p.What})
	}
	return out
}

// storedVerifyRows reads back the problems of a failed verification from
// the text the database kept ("release v failed verification (n
// problems); where: what; …"), at most the first twenty of them.
func storedVerifyRows(s string) []verifyRow {
	parts := strings.Split(s, "; ")
	var out []verifyRow
	for _, p := range parts[1:] {
		if strings.HasPrefix(p, "… and ") {
			continue
		}
		where, what, ok := strings.Cut(p, ": ")
		if !ok {
			out = append(out, verifyRow{What: verifyWhat(p), Raw: p})
			continue
		}
		out = append(out, verifyRow{Where: where, What: verifyWhat(what), Raw: what})
	}
	if len(out) == 0 && s != "" {
		out = append(out, verifyRow{What: verifyWhat(s), Raw: s})
	}
	return out
}
