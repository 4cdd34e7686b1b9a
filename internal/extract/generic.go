package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// Page is what the generic extractor finds on a page that has no template.
type Page struct {
	Title       string            `json:"title"`
	PublishTime *time.Time        `json:"publish_time"`
	Text        string            `json:"text"`
	Attributes  map[string]string `json:"attributes"` // normalized label → value
	Canonical   map[string]string `json:"canonical"`  // the seven canonical fields found
	Links       []string          `json:"links"`
}

// MainText finds the main text of a page. The generic extractor is a
// maintained library (go-trafilatura) kept behind this interface so it can
// be replaced without touching callers.
type MainText interface {
	MainText(doc *goquery.Document, pageURL *url.URL) (title, text string, published time.Time, err error)
}

// Trafilatura is the default MainText.
type Trafilatura struct{}

// MainText implements MainText with go-trafilatura, falling back to its
// readability/distiller candidates when its own pass finds nothing.
func (Trafilatura) MainText(doc *goquery.Document, pageURL *url.URL) (string, string, time.Time, error) {
	res, err := trafilaturaExtract(doc, pageURL, false)
	if err != nil {
		return "", "", time.Time{}, err
	}
	return strings.TrimSpace(res.Metadata.Title), strings.TrimSpace(res.ContentText), res.Metadata.Date, nil
}

// trafilaturaExtract runs the library; markup keeps links and images in
// its content tree, for callers that render it.
func trafilaturaExtract(doc *goquery.Document, pageURL *url.URL, markup bool) (*trafilatura.ExtractResult, error) {
	if len(doc.Nodes) == 0 {
		return nil, fmt.Errorf("main text: empty document")
	}
	res, err := trafilatura.ExtractDocument(doc.Nodes[0], trafilatura.Options{
		OriginalURL:     pageURL,
		EnableFallback:  true,
		ExcludeComments: true,
		Deduplicate:     true,
		IncludeLinks:    markup,
		IncludeImages:   markup,
	})
	if err != nil {
		return nil, fmt.Errorf("main text: %w", err)
	}
	return res, nil
}

// Main is a page's main content as the generic extractor finds it: the
// content as HTML (the library's own simplified tree of paragraphs,
// headings, lists and tables), its plain text and the page's title.
type Main struct {
	Title string
	Text  string
	Node  *html.Node // nil when nothing was found
}

// MainContent finds the main content of a page with the generic extractor,
// for callers that want its markup (a Markdown rendering) and not only its
// text. The document is left as it was.
func MainContent(doc *goquery.Document, pageURL *url.URL) (*Main, error) {
	// The library rewrites the tree it reads: give it a copy.
	cp := goquery.CloneDocument(doc)
	res, err := trafilaturaExtract(cp, pageURL, true)
	if err != nil {
		return nil, err
	}
	m := &Main{Title: pickTitle(doc, res.Metadata.Title), Text: strings.TrimSpace(res.ContentText), Node: res.ContentNode}
	if m.Node != nil && m.Title != "" && !strings.HasPrefix(CleanText(m.Text), m.Title) {
		// The library takes the headline for metadata and leaves it out
		// of the content; a reader of the content wants it on top.
		h := &html.Node{Type: html.ElementNode, Data: "h1"}
		h.AppendChild(&html.Node{Type: html.TextNode, Data: m.Title})
		m.Node.InsertBefore(h, m.Node.FirstChild)
		m.Text = m.Title + "\n" + m.Text
	}
	return m, nil
}

// Title is a page's headline: its own <h1> (or a heading its <title>
// starts with) rather than the site-decorated <title>.
func Title(doc *goquery.Document) string { return pickTitle(doc, doc.Find("title").First().Text()) }

// pubDateMetas are <meta> names that government CMSs use for the
// publication time, most specific first.
var pubDateMetas = []string{
	`meta[name="PubDate"]`, `meta[name="pubdate"]`, `meta[name="publishdate"]`,
	`meta[name="firstpublishedtime"]`, `meta[property="article:published_time"]`,
	`meta[name="ArticleDate"]`, `meta[itemprop="datePublished"]`,
}

// Generic extracts a page with no template: title, publication time, main
// text, any attribute block, and the page's links made absolute.
func Generic(html []byte, pageURL *url.URL, mt MainText) (*Page, error) {
	if mt == nil {
		mt = Trafilatura{}
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return nil, fmt.Errorf("generic extract: parse html: %w", err)
	}
	p := &Page{Attributes: map[string]string{}, Canonical: map[string]string{}, Links: []string{}}

	if block := FindAttributeBlock(doc.Selection); block != nil {
		a := ParseAttributes(block)
		for _, l := range a.Order {
			p.Attributes[l] = a.Raw[l]
		}
		for f, v := range a.Canonical {
			p.Canonical[f] = v
		}
	}

	title, text, published, err := mt.MainText(doc, pageURL)
	if err != nil {
		return nil, err
	}
	p.Title = pickTitle(doc, title)
	p.Text = text

	for _, sel := range pubDateMetas {
		if v, ok := doc.Find(sel).First().Attr("content"); ok {
			if t, _, err := ParseDate(v); err == nil {
				p.PublishTime = &t
				break
			}
		}
	}
	if p.PublishTime == nil {
		if t, ok := visibleTime(doc.Find("body").Text()); ok {
			p.PublishTime = &t
		}
	}
	if p.PublishTime == nil {
		if v := p.Canonical[FieldPublishDate]; v != "" {
			if t, _, err := ParseDate(v); err == nil {
				p.PublishTime = &t
			}
		}
	}
	if p.PublishTime == nil && !published.IsZero() {
		if t, ok := statedDate(doc, published); ok {
			p.PublishTime = &t
		}
	}

	p.Links = Links(doc, pageURL)
	return p, nil
}

// Links returns the page's links made absolute against pageURL: http and
// https only, without fragments, each once, in page order. Never nil.
func Links(doc *goquery.Document, pageURL *url.URL) []string {
	links := []string{}
	if pageURL == nil {
		return links
	}
	seen := map[string]bool{}
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		u, err := Resolve(pageURL, href)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		u.Fragment = ""
		if s := u.String(); !seen[s] {
			seen[s] = true
			links = append(links, s)
		}
	})
	return links
}

// urlLikeRe matches URLs and paths in a page's text and scripts: their
// digits (/2024/0305/, t20240305_1.html) are not a date the page states.
var urlLikeRe = regexp.MustCompile(`(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//[^\s"'<>]*|(?:^|[\s"'(=])/[^\s"'<>]*|[^\s"'<>/]*\.s?html?\b`)

// statedDate keeps the date the main-text library found only if the page
// itself states that day in its text, a <meta> content, a <time> or its
// structured data. The library also reads dates out of URLs (the page's
// own, its canonical link, its links), and a number in a path is not a
// publication date: a page that states no date gets none. The time comes
// from the stated text, read as Asia/Shanghai when it has no zone.
func statedDate(doc *goquery.Document, found time.Time) (time.Time, bool) {
	var evidence []string
	evidence = append(evidence, doc.Find("title").Text(), doc.Find("body").Text())
	doc.Find("meta[content]").Each(func(_ int, m *goquery.Selection) {
		v, _ := m.Attr("content")
		evidence = append(evidence, v)
	})
	doc.Find("time[datetime]").Each(func(_ int, m *goquery.Selection) {
		v, _ := m.Attr("datetime")
		evidence = append(evidence, v)
	})
	doc.Find(`script[type="application/ld+json"]`).Each(func(_ int, m *goquery.Selection) {
		evidence = append(evidence, m.Text())
	})
	for _, text := range evidence {
		text = urlLikeRe.ReplaceAllString(text, " ")
		for _, m := range dateRe.FindAllStringSubmatch(text, -1) {
			y, mo, d, _, _, _, _ := dateFields(m)
			if y != found.Year() || mo != int(found.Month()) || d != found.Day() {
				continue
			}
			if t, _, err := ParseDate(m[0]); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// timeLabelRe finds the labels under which portals print an article's
// publication time as text ("发布时间：2025-03-05 10:20").
var timeLabelRe = regexp.MustCompile(`(?:发布时间|发布日期|发表时间)\s*[:：]`)

// visibleTime reads the first publication time printed as text after one
// of the labels, for pages with no machine-readable <meta> time. Only a
// date with a time of day counts: a bare date is no better than the
// attribute block's 发布日期, which comes next.
func visibleTime(text string) (time.Time, bool) {
	for _, loc := range timeLabelRe.FindAllStringIndex(text, 8) {
		rest := text[loc[1]:]
		if len(rest) > 48 {
			rest = rest[:48] // ParseDate takes the first date anywhere in its input
		}
		if t, hasTime, err := ParseDate(rest); err == nil && hasTime {
			return t, true
		}
	}
	return time.Time{}, false
}

// pickTitle prefers the page's own <h1> when the extractor's title is
// the site-decorated <title> ("标题 - 某某网站") or missing. Portals that
// set the headline in an h2 or h3 (gd.gov.cn: div.zw-title h3) get the
// same: a heading the extracted title starts with, followed by a
// decoration separator, is the title without the decoration.
func pickTitle(doc *goquery.Document, extracted string) string {
	extracted = CleanText(extracted)
	h1 := CleanText(doc.Find("h1").First().Text())
	if h1 != "" && (extracted == "" || strings.HasPrefix(extracted, h1)) {
		return h1
	}
	if extracted == "" {
		return CleanText(doc.Find("title").First().Text())
	}
	title := extracted
	doc.Find("h1, h2, h3").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		h := CleanText(s.Text())
		if len([]rune(h)) < 4 || !strings.HasPrefix(extracted, h) {
			return true
		}
		if rest := strings.TrimSpace(extracted[len(h):]); rest == "" || startsWithSeparator(rest) {
			title = h
			return false
		}
		return true
	})
	return title
}

// titleSeparators set a site name off a headline in <title>.
const titleSeparators = "_-|｜—–－·:："

func startsWithSeparator(s string) bool {
	r, _ := firstRune(s)
	return strings.ContainsRune(titleSeparators, r)
}

// FindAttributeBlock finds the smallest table, dl, ul or div that holds at
// least two distinct canonical attribute labels, or nil.
func FindAttributeBlock(root *goquery.Selection) *goquery.Selection {
	var best *goquery.Selection
	bestLen := 0
	root.Find("table, dl, ul, div").Each(func(_ int, s *goquery.Selection) {
		found := map[string]bool{}
		s.Find("td, th, dt, li, span, label, p, div").Each(func(_ int, c *goquery.Selection) {
			t := c.Text()
			if len([]rune(t)) > 40 {
				// Long cells may be "标签：值" pairs.
				if l, _, ok := splitLabelValue(t); ok {
					t = l
				} else {
					return
				}
			} else if l, _, ok := splitLabelValue(t); ok {
				t = l
			}
			if f := CanonicalField(t); f != "" {
				found[f] = true
			}
		})
		if len(found) < 2 {
			return
		}
		n := len(s.Text())
		if best == nil || n < bestLen {
			best, bestLen = s, n
		}
	})
	return best
}
