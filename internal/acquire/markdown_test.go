package acquire

import (
	"bytes"
	"strings"
	"testing"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	xhtml "golang.org/x/net/html"
)

// commonMark renders Markdown as a CommonMark reader shows it (goldmark,
// with GFM tables, inline HTML passed through).
func commonMark(t *testing.T, md string) string {
	t.Helper()
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gm.Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func convert(t *testing.T, page string) string {
	t.Helper()
	doc, err := xhtml.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	md, err := toMarkdown(doc, "http://www.small.gov.test/zwgk/a.html")
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestMarkdownEmphasisBesideCJKPunctuation: strong and emphasis touching
// Chinese punctuation render as such in a CommonMark renderer, where the
// library's own ** would show as asterisks.
func TestMarkdownEmphasisBesideCJKPunctuation(t *testing.T) {
	tests := []struct {
		name, html, shown string
	}{
		{"book title in strong", `<p>现将<strong>《数据管理办法》</strong>印发给你们</p>`, "<strong>《数据管理办法》</strong>"},
		{"quotes in b", `<p>按照<b>“谁主管、谁负责”</b>的原则</p>`, "<strong>“谁主管、谁负责”</strong>"},
		{"ending in a full stop", `<p>请<strong>认真执行。</strong>特此通知</p>`, "<strong>认真执行。</strong>"},
		{"em with brackets", `<p>见<em>（附件）</em>所列</p>`, "<em>（附件）</em>"},
		{"plain strong stays Markdown", `<p>一、<strong>总体要求</strong></p>`, "<strong>总体要求</strong>"},
		{"strong at the start of a line", `<p><strong>《通知》</strong></p>`, "<strong>《通知》</strong>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := convert(t, tt.html)
			got := commonMark(t, md)
			if !strings.Contains(got, tt.shown) || strings.Contains(got, "**") {
				t.Errorf("markdown %q renders as %q; want it to show %q", md, got, tt.shown)
			}
		})
	}
	// The library alone writes ** there, which CommonMark shows as is:
	// the case the renderer exists for.
	raw, err := htmltomarkdown.ConvertString(`<p>现将<strong>《数据管理办法》</strong>印发给你们</p>`)
	if err != nil {
		t.Fatal(err)
	}
	if got := commonMark(t, raw); strings.Contains(got, "<strong>") {
		t.Logf("the library's own output %q now renders bold (%q): the workaround may be dropped", raw, got)
	}
}

// TestMarkdownTablesAndLinks: tables become GFM tables; links and images
// are absolute.
func TestMarkdownTablesAndLinks(t *testing.T) {
	md := convert(t, `<table><tr><th>章</th><th>内容</th></tr><tr><td>第一章</td><td>总则</td></tr></table>
<p><a href="../files/rules.html">办法全文</a> <img src="/img/seal.png" alt="印章"></p>`)
	got := commonMark(t, md)
	for _, want := range []string{"<table>", "<td>第一章</td>", `href="http://www.small.gov.test/files/rules.html"`, `src="http://www.small.gov.test/img/seal.png"`} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing from the rendering of\n%s\n%s", want, md, got)
		}
	}
}
