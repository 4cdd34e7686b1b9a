package extract

import (
	"strings"
	"unicode"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// CleanText collapses runs of white space (U+3000 and NBSP included) into
// one space and trims the ends.
func CleanText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || r == '\u3000' || r == '\u00a0' || r == '\u200b' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// blockTags end a line of text when they open or close.
var blockTags = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "table": true, "ul": true, "ol": true,
	"section": true, "article": true, "blockquote": true, "pre": true, "dd": true, "dt": true,
	"dl": true, "hr": true, "center": true, "form": true, "header": true, "footer": true,
}

// skipTags hold no readable text.
var skipTags = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "iframe": true,
	"object": true, "svg": true, "button": true, "select": true, "input": true, "head": true,
}

// BodyText renders a selection as readable plain text: one paragraph per
// line, table cells separated by a tab, white space inside a line collapsed.
func BodyText(sel *goquery.Selection) string {
	var lines []string
	var cur strings.Builder
	flush := func() {
		if t := CleanText(cur.String()); t != "" {
			lines = append(lines, t)
		}
		cur.Reset()
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			cur.WriteString(n.Data)
			return
		case html.ElementNode:
			if skipTags[n.Data] {
				return
			}
			if n.Data == "td" || n.Data == "th" {
				cur.WriteString(" \t ")
			}
			if blockTags[n.Data] {
				flush()
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && blockTags[n.Data] {
			flush()
		}
	}
	for _, n := range sel.Nodes {
		walk(n)
	}
	flush()
	return strings.Join(lines, "\n")
}
