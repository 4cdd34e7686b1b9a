package sim

import (
	"fmt"
	"path"
	"strings"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// kv is one attribute label and value as printed on a detail page.
type kv struct {
	Label string
	Value string
	Wide  bool // spans a whole row
}

// attributes lists the 公开属性 of a as site s prints them: each site has
// its own labels, order and date format.
func attributes(s *site, a *article) []kv {
	switch s.Kind {
	case kindGkmlpt:
		return []kv{
			{Label: "索引号", Value: a.IndexNo}, {Label: "分类", Value: a.Category},
			{Label: "发布机构", Value: a.Publisher}, {Label: "成文日期", Value: isoDate(a.Effective)},
			{Label: "名称", Value: a.Title, Wide: true},
			{Label: "文号", Value: a.DocNo}, {Label: "发布日期", Value: isoDate(a.Published)},
			{Label: "主题词", Value: a.TopicWords, Wide: true},
		}
	case kindLianzhou:
		valid := "有效"
		if a.Abolished {
			valid = "废止"
		}
		return []kv{
			{Label: "信息索引", Value: a.IndexNo}, {Label: "主题分类", Value: a.Category},
			{Label: "发文机关", Value: a.Publisher}, {Label: "生成日期", Value: cnDate(a.Effective)},
			{Label: "标题", Value: a.Title, Wide: true},
			{Label: "发文字号", Value: a.DocNo}, {Label: "发布日期", Value: cnDate(a.Published)},
			{Label: "关键词", Value: a.TopicWords}, {Label: "有效性", Value: valid},
		}
	case kindGD:
		return []kv{
			{Label: "索引号", Value: a.IndexNo}, {Label: "分类", Value: a.Category},
			{Label: "发布机构", Value: a.Publisher}, {Label: "成文日期", Value: isoDate(a.Effective)},
			{Label: "文号", Value: a.DocNo}, {Label: "发布日期", Value: isoDate(a.Published)},
		}
	case kindGov:
		return []kv{
			{Label: "索\u3000引\u3000号", Value: a.IndexNo}, {Label: "主题分类", Value: a.Category},
			{Label: "发文机关", Value: a.Publisher}, {Label: "成文日期", Value: slashDate(a.Effective)},
			{Label: "标\u3000\u3000题", Value: a.Title, Wide: true},
			{Label: "发文字号", Value: a.DocNo}, {Label: "发布日期", Value: slashDate(a.Published)},
			{Label: "主\u3000题\u3000词", Value: a.TopicWords, Wide: true},
		}
	}
	return nil
}

// renderBody renders the body blocks; imgs are interleaved (news).
func renderBody(a *article) string {
	var b strings.Builder
	img := 0
	for i, bl := range a.Blocks {
		switch {
		case bl.Kind == "table":
			b.WriteString("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\"><tbody>\n")
			for _, row := range bl.Rows {
				b.WriteString("<tr>")
				for _, cell := range row {
					fmt.Fprintf(&b, "<td>%s</td>", esc(cell))
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</tbody></table>\n")
		case bl.Kind == "h":
			fmt.Fprintf(&b, "<p><strong>%s</strong></p>\n", esc(bl.Text))
		case bl.Align == "right":
			fmt.Fprintf(&b, "<p style=\"text-align: right;\">%s</p>\n", esc(bl.Text))
		default:
			fmt.Fprintf(&b, "<p style=\"text-indent: 2em;\">%s</p>\n", esc(bl.Text))
		}
		if img < len(a.Images) && i%3 == 1 {
			fmt.Fprintf(&b, "<p style=\"text-align: center;\"><img src=\"%s\" alt=\"\" width=\"64\" height=\"48\"></p>\n", a.Images[img])
			img++
		}
	}
	return b.String()
}

// renderDetail renders a's detail page in its site's style.
func (w *World) renderDetail(s *site, a *article) *resource {
	var body string
	switch s.Kind {
	case kindGkmlpt:
		body = gkDetail(s, a)
	case kindLianzhou:
		page := lianzhouDetail(s, a)
		enc, err := simplifiedchinese.GB18030.NewEncoder().String(page)
		if err != nil {
			return nil
		}
		// Declared only by <meta charset="gb2312">, never in Content-Type.
		return &resource{ctype: "text/html", body: []byte(enc), mod: a.Modified}
	case kindGD:
		body = gdDetail(s, a)
	case kindGov:
		body = govDetail(s, a)
	default:
		body = newsDetail(s, a)
	}
	return &resource{ctype: "text/html; charset=utf-8", body: []byte(body), mod: a.Modified}
}

func gkDetail(s *site, a *article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>%s</title>
<meta name="ArticleTitle" content="%s">
<meta name="PubDate" content="%s">
<meta name="ContentSource" content="%s">
</head>
<body>
<div class="header"><a href="/%s/gkmlpt/index">%s政府信息公开</a></div>
<div class="content-box">
<div class="classify">
<table class="table-infos">
<tbody>
`, esc(a.Title), esc(a.Title), isoMinute(a.Published), esc(a.Publisher), a.Column.dept.Path, esc(a.Column.dept.Name))
	writeTableAttrs(&b, attributes(s, a), "td", "first")
	fmt.Fprintf(&b, `</tbody>
</table>
</div>
<div class="article-content">
<h1 class="title">%s</h1>
<div class="date-row"><span class="date">发布时间：%s</span><span class="source">来源：%s</span></div>
<div class="article-content-detail" id="zoom">
%s</div>
`, esc(a.Title), isoMinute(a.Published), esc(a.Publisher), renderBody(a))
	writeAttachmentLinks(&b, "attachment", a, func(f *attachment) string { return f.Path })
	b.WriteString(`</div>
</div>
<div class="share">分享到：<a href="javascript:void(0)">微信</a> <a href="javascript:void(0)">微博</a></div>
<div class="footer">主办：清远市人民政府办公室　技术支持：清远市政务服务数据管理局</div>
</body>
</html>
`)
	return b.String()
}

// writeTableAttrs writes attributes as table rows with two label/value pairs
// per row; wide attributes take a whole row.
func writeTableAttrs(b *strings.Builder, attrs []kv, labelTag, labelClass string) {
	var pending []kv
	flush := func() {
		if len(pending) == 0 {
			return
		}
		b.WriteString("<tr>")
		for _, p := range pending {
			fmt.Fprintf(b, "<%s class=\"%s\">%s：</%s><td class=\"value\">%s</td>", labelTag, labelClass, esc(p.Label), labelTag, esc(p.Value))
		}
		b.WriteString("</tr>\n")
		pending = nil
	}
	for _, p := range attrs {
		if p.Wide {
			flush()
			fmt.Fprintf(b, "<tr><%s class=\"%s\">%s：</%s><td class=\"value\" colspan=\"3\">%s</td></tr>\n", labelTag, labelClass, esc(p.Label), labelTag, esc(p.Value))
			continue
		}
		pending = append(pending, p)
		if len(pending) == 2 {
			flush()
		}
	}
	flush()
}

func writeAttachmentLinks(b *strings.Builder, class string, a *article, href func(*attachment) string) {
	if len(a.Attachments) == 0 {
		return
	}
	fmt.Fprintf(b, "<div class=\"%s\">附件：\n", class)
	for _, f := range a.Attachments {
		fmt.Fprintf(b, "<p><a href=\"%s\" target=\"_blank\">%s</a></p>\n", esc(href(f)), esc(f.Name))
	}
	b.WriteString("</div>\n")
}

func lianzhouDetail(s *site, a *article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<html>
<head>
<meta charset="gb2312">
<title>%s_%s</title>
</head>
<body>
<div class="top">%s　当前位置：<a href="/">首页</a> &gt; <a href="../">%s</a></div>
<div class="xxgk_top">
<table class="xxgk-table" width="100%%" border="0" cellspacing="0">
`, esc(a.Title), esc(s.Name), esc(s.Name), esc(a.Column.Name))
	writeTableAttrs(&b, attributes(s, a), "td", "t1")
	fmt.Fprintf(&b, `</table>
</div>
<div class="detail">
<h2 class="title">%s</h2>
<div class="info"><span class="time">发布时间：%s</span>　<span class="source">来源：%s</span></div>
<div class="TRS_Editor" id="zoom">
%s</div>
`, esc(a.Title), isoMinute(a.Published), esc(a.Publisher), renderBody(a))
	// TRS writes attachment links relative to the page: ./P0….pdf
	writeAttachmentLinks(&b, "fujian", a, func(f *attachment) string { return "./" + path.Base(f.Path) })
	fmt.Fprintf(&b, `</div>
<div class="bottom">主办单位：%s　网站标识码：%s</div>
</body>
</html>
`, esc(s.Depts[0].Name), s.Mark)
	return b.String()
}

func gdDetail(s *site, a *article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<title>%s_%s</title>
<meta name="ArticleTitle" content="%s">
<meta name="PubDate" content="%s">
<meta name="ContentSource" content="%s">
</head>
<body>
<div class="zw-title"><h3>%s</h3></div>
<div class="introduce">
<dl>
`, esc(a.Title), esc(s.Name), esc(a.Title), isoMinute(a.Published), esc(a.Publisher), esc(a.Title))
	for _, p := range attributes(s, a) {
		fmt.Fprintf(&b, "<dt>%s：</dt><dd>%s</dd>\n", esc(p.Label), esc(p.Value))
	}
	fmt.Fprintf(&b, `</dl>
</div>
<div class="zw" id="zoom">
%s</div>
`, renderBody(a))
	writeAttachmentLinks(&b, "attach", a, func(f *attachment) string { return f.Path })
	b.WriteString(`<div class="share">【打印】【关闭】</div>
</body>
</html>
`)
	return b.String()
}

func govDetail(s *site, a *article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>%s_国务院文件_中国政府网</title>
<meta name="firstpublishedtime" content="%s">
</head>
<body>
<div class="policyLibraryOverview_header">
<table class="bd1" cellpadding="0" cellspacing="1">
<tbody>
`, esc(a.Title), a.Published.In(shanghai).Format("2006-01-02-15:04:05"))
	writeTableAttrs(&b, attributes(s, a), "th", "label")
	fmt.Fprintf(&b, `</tbody>
</table>
</div>
<div class="article">
<h1>%s</h1>
<div class="pages-date">%s</div>
<div class="pages_content" id="UCAP-CONTENT">
%s</div>
`, esc(a.Title), isoMinute(a.Published), renderBody(a))
	writeAttachmentLinks(&b, "attach", a, func(f *attachment) string { return "http://" + s.Host + f.Path })
	b.WriteString(`</div>
</body>
</html>
`)
	return b.String()
}

func newsDetail(s *site, a *article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>%s - 北江新闻网</title>
<meta property="og:title" content="%s">
</head>
<body>
<div class="nav"><a href="/">首页</a> <a href="/news/">本地新闻</a></div>
<div class="ad">广告位招租</div>
<h1 class="headline">%s</h1>
<div class="meta"><span class="time">%s</span> <span class="source">来源：北江新闻网</span> <span class="author">记者：%s</span></div>
<article class="article-body">
%s</article>
%s<div class="related"><h4>相关阅读</h4><ul><li><a href="/news/">更多本地新闻</a></li></ul></div>
<div class="share">分享到：微信 微博</div>
%s</body>
</html>
`, esc(a.Title), esc(a.Title), esc(a.Title), isoMinute(a.Published), esc(a.Publisher), renderBody(a), newsAttachments(a), newsComments(a))
	return b.String()
}

func newsAttachments(a *article) string {
	var b strings.Builder
	writeAttachmentLinks(&b, "attachments", a, func(f *attachment) string { return f.Path })
	return b.String()
}

// newsComments is the readers' comment thread under a news article: a few
// hundred comments, so the page is well over 64 KiB, as news pages with
// their threads, recommendations and inline data are. It comes after the
// article, and a head read of the page misses only comments. The thread
// is derived from the article's id alone (no draw from the site's random
// source), so it changes nothing else the site generates.
func newsComments(a *article) string {
	names := []string{"清远网友", "北江边的人", "老街坊", "上班族小陈", "退休教师", "连州老乡", "英德茶农", "清城居民"}
	says := []string{
		"这件事关系到我们每个家庭，希望相关部门尽快落实，把好事办好、实事办实。",
		"支持！去年我们小区也遇到同样的问题，后来街道出面协调才解决，效率还是很高的。",
		"请问具体的办理时间和地点在哪里公布？有没有线上办理的渠道？",
		"点赞记者的深入报道，希望后续能继续跟进，让大家看到落实的情况。",
		"家门口的变化看得见，道路修好了，公交也多了，生活越来越方便。",
		"建议在周末也开放窗口，上班族平时很难抽出时间去现场办理。",
	}
	var b strings.Builder
	n := 320 + a.ID%160
	fmt.Fprintf(&b, "<div class=\"comments\"><h4>网友评论（%d）</h4>\n<ul class=\"comment-list\">\n", n)
	for i := range n {
		k := a.ID*31 + i*7
		fmt.Fprintf(&b, "<li class=\"comment\" data-id=\"%d\"><span class=\"user\">%s%03d</span><span class=\"floor\">%d楼</span><p>%s</p><span class=\"likes\">赞 %d</span></li>\n",
			a.ID*1000+i, names[k%len(names)], k%997, i+1, says[(k/3)%len(says)], k%89)
	}
	b.WriteString("</ul></div>\n")
	return b.String()
}

func fileResource(f *attachment, fallback time.Time) *resource {
	mod := f.mod
	if mod.IsZero() {
		mod = fallback
	}
	return &resource{ctype: mimeOf(f.Ext), body: f.data, mod: mod}
}
