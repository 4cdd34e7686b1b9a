package acquire

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/JohannesKaufmann/dom"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// newConverter is the HTML-to-Markdown converter: CommonMark with tables,
// and strong and emphasis that a CommonMark reader shows as such beside
// CJK punctuation (see renderEmphasis).
func newConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	for _, tag := range []string{"strong", "b", "em", "i"} {
		conv.Register.RendererFor(tag, converter.TagTypeInline, renderEmphasis, converter.PriorityEarly)
	}
	return conv
}

// toMarkdown converts n (a document or an element) to Markdown with links
// and images made absolute against pageURL.
func toMarkdown(n *html.Node, pageURL string) (string, error) {
	out, err := newConverter().ConvertNode(n, converter.WithDomain(pageURL))
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// renderEmphasis writes strong and emphasis whose text begins or ends with
// punctuation as inline HTML (<strong>《通知》</strong>). CommonMark opens
// ** only where it is left-flanking: before punctuation such as 《 that
// needs white space or punctuation in front of it, and Chinese has no
// spaces between words, so 关于**《通知》**的 would show its asterisks. The
// tags are CommonMark's own way of saying the same thing, and every
// renderer shows them. Other emphasis is left to the CommonMark plugin.
func renderEmphasis(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	var buf bytes.Buffer
	ctx.RenderChildNodes(ctx, &buf, n)
	content := strings.TrimSpace(buf.String())
	if content == "" || strings.Contains(content, "\n") {
		return converter.RenderTryNext
	}
	first, _ := utf8.DecodeRuneInString(content)
	last, _ := utf8.DecodeLastRuneInString(content)
	if !isCMPunct(first) && !isCMPunct(last) {
		return converter.RenderTryNext
	}
	tag := "strong"
	if name := dom.NodeName(n); name == "em" || name == "i" {
		tag = "em"
	}
	lead, trail := buf.String()[:len(buf.String())-len(strings.TrimLeft(buf.String(), " \t"))], ""
	if t := strings.TrimRight(buf.String(), " \t"); len(t) < buf.Len() {
		trail = buf.String()[len(t):]
	}
	w.WriteString(lead + "<" + tag + ">" + content + "</" + tag + ">" + trail)
	return converter.RenderSuccess
}

// isCMPunct is CommonMark's punctuation character: Unicode P or S.
func isCMPunct(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
