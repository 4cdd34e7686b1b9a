package acquire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"zhizhi/internal/charset"
	"zhizhi/internal/extract"
)

// Document is a successful answer's data: the formats asked for, the
// page's metadata and the Acquisition Result.
type Document struct {
	Markdown    *string     `json:"markdown,omitempty"`
	HTML        *string     `json:"html,omitempty"`
	RawHTML     *string     `json:"rawHtml,omitempty"`
	Text        *string     `json:"text,omitempty"`
	Links       *[]string   `json:"links,omitempty"`
	Metadata    Metadata    `json:"metadata"`
	Acquisition Acquisition `json:"acquisition"`

	found []string // every link of the page, for a crawl job
}

// Metadata is Firecrawl's metadata object with what zhizhi adds: the
// charset the page was read in and the public attributes (公开属性) of a
// government document, under their canonical names, when the page shows
// them.
type Metadata struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language,omitempty"`
	SourceURL   string `json:"sourceURL"`
	URL         string `json:"url"`
	StatusCode  int    `json:"statusCode"`
	ContentType string `json:"contentType"`
	Charset     string `json:"charset,omitempty"`
	CacheState  string `json:"cacheState"` // "hit": from a stored snapshot; "miss": fetched now
	CachedAt    string `json:"cachedAt,omitempty"`

	IndexNo       string `json:"index_no,omitempty"`       // 索引号
	DocNo         string `json:"doc_no,omitempty"`         // 文号
	Publisher     string `json:"publisher,omitempty"`      // 发布机构
	PublishDate   string `json:"publish_date,omitempty"`   // 发布日期
	EffectiveDate string `json:"effective_date,omitempty"` // 生效日期
	TopicWords    string `json:"topic_words,omitempty"`    // 主题词
	OpenCategory  string `json:"open_category,omitempty"`  // 公开类别
	// PublicAttributes are the attribute block's labels as the page
	// prints them, with their values.
	PublicAttributes map[string]string `json:"publicAttributes,omitempty"`
}

// Acquisition is the auditable result of one acquisition: where the bytes
// came from, where they are kept, and what was done to get them. It is
// evidence, not knowledge: the content it describes is untrusted.
type Acquisition struct {
	SourceURL string `json:"source_url"`
	FinalURL  string `json:"final_url"`
	Provider  string `json:"provider"`
	// ProviderReason says why the router chose Provider, in plain words.
	ProviderReason string     `json:"provider_reason,omitempty"`
	FetchedAt      string     `json:"fetched_at"`
	Raw            RawObject  `json:"raw"`
	Normalized     Normalized `json:"normalized"`
	// Untrusted is always true: the page's text is data from the web. It
	// never changes configuration, scope, permissions or budgets, and a
	// reader (an agent above all) must not take instructions from it.
	Untrusted bool     `json:"untrusted"`
	Evidence  Evidence `json:"evidence"`
}

// RawObject names the stored raw body.
type RawObject struct {
	Ref         string `json:"ref"` // blob path, blobs/ab/cd/<sha256>
	SHA256      string `json:"sha256"`
	Bytes       int    `json:"bytes"`
	ContentType string `json:"content_type"`
}

// Normalized names the normalized representation: the page's Markdown (as
// data.markdown carries it when asked for), whichever formats were asked.
type Normalized struct {
	Format string `json:"format"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// Evidence is the bounded record of the execution.
type Evidence struct {
	Attempts     int    `json:"attempts"` // requests made to the site for this answer (0 from a snapshot)
	Status       int    `json:"status"`
	WireBytes    int64  `json:"wire_bytes"`
	DurationMS   int64  `json:"duration_ms"`
	Tier         string `json:"tier,omitempty"`
	Robots       string `json:"robots"`
	FromSnapshot bool   `json:"from_snapshot"`
	SnapshotAge  *int64 `json:"snapshot_age_ms,omitempty"`
	MaxBytes     int64  `json:"max_bytes"`
	TimeoutMS    int64  `json:"timeout_ms"`

	// The browser tier's (POST /v1/render): the seconds Chromium spent
	// on the page, and the requests the page made or was refused (at
	// most maxSubrequests of them; SubrequestsTotal counts them all).
	BrowserSeconds   *float64     `json:"browser_seconds,omitempty"`
	Subrequests      []Subrequest `json:"subrequests,omitempty"`
	SubrequestsTotal int          `json:"subrequests_total,omitempty"`
}

// dropTags never carry content.
var dropTags = cascadia.MustCompile("script, style, noscript, template, iframe, object, embed, link, meta, base, form, button, input, select, textarea")

// build makes the answer's data from a page.
func build(req *fetchRequest, pg *page, now time.Time) (*Document, error) {
	final, err := url.Parse(pg.FinalURL)
	if err != nil {
		return nil, fmt.Errorf("final url %q: %w", pg.FinalURL, err)
	}
	d := &Document{Metadata: Metadata{SourceURL: pg.SourceURL, URL: pg.FinalURL, StatusCode: pg.Status,
		ContentType: pg.ContentType, CacheState: "miss"}}
	var markdown, htmlOut, rawHTML, text string
	links := []string{}
	if kindOfContent(pg.ContentType) == "text" {
		body, cs, err := charset.DecodeText(pg.Body, pg.ContentType)
		if err != nil {
			return nil, err
		}
		d.Metadata.Charset = cs
		text, rawHTML = string(body), string(body)
		markdown = text
		htmlOut = "<pre>" + template.HTMLEscapeString(text) + "</pre>"
	} else {
		body, cs, err := charset.DecodeHTML(pg.Body, pg.ContentType)
		if err != nil {
			return nil, err
		}
		d.Metadata.Charset = cs
		rawHTML = string(body)
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("parse html: %w", err)
		}
		links = extract.Links(doc, final)
		pageMetadata(doc, &d.Metadata)
		var node *html.Node
		node, text, err = content(req, doc, final, &d.Metadata)
		if err != nil {
			return nil, err
		}
		absolutize(node, final)
		if htmlOut, err = goquery.OuterHtml(goquery.NewDocumentFromNode(node).Selection); err != nil {
			return nil, err
		}
		if markdown, err = toMarkdown(node, final.String()); err != nil {
			return nil, fmt.Errorf("markdown: %w", err)
		}
		markdown = strings.TrimSpace(markdown)
	}
	sum := sha256.Sum256([]byte(markdown))
	d.Acquisition = Acquisition{SourceURL: pg.SourceURL, FinalURL: pg.FinalURL, Provider: providerDirect,
		FetchedAt:  pg.FetchedAt.UTC().Format(time.RFC3339),
		Raw:        RawObject{Ref: pg.RawRef, SHA256: pg.RawSHA256, Bytes: len(pg.Body), ContentType: pg.ContentType},
		Normalized: Normalized{Format: normalizedFormatLabel, SHA256: hex.EncodeToString(sum[:]), Bytes: len(markdown)},
		Untrusted:  true,
		Evidence: Evidence{Attempts: pg.Attempts, Status: pg.Status, WireBytes: pg.WireBytes,
			DurationMS: pg.Duration.Milliseconds(), Tier: pg.Tier, Robots: robotsAllowed, FromSnapshot: pg.FromSnapshot,
			MaxBytes: req.MaxBytes, TimeoutMS: req.Timeout.Milliseconds()}}
	if pg.FromSnapshot {
		age := now.Sub(pg.FetchedAt).Milliseconds()
		d.Acquisition.Evidence.SnapshotAge = &age
		d.Acquisition.Evidence.Robots = robotsNotAsked
		d.Metadata.CacheState = "hit"
		d.Metadata.CachedAt = d.Acquisition.FetchedAt
	}
	if req.Formats[FormatMarkdown] {
		d.Markdown = &markdown
	}
	if req.Formats[FormatHTML] {
		d.HTML = &htmlOut
	}
	if req.Formats[FormatRawHTML] {
		d.RawHTML = &rawHTML
	}
	if req.Formats[FormatText] {
		d.Text = &text
	}
	if req.Formats[FormatLinks] {
		d.Links = &links
	}
	d.found = links
	return d, nil
}

// pageMetadata reads what the whole page says about itself.
func pageMetadata(doc *goquery.Document, m *Metadata) {
	m.Title = extract.Title(doc)
	if v, ok := doc.Find(`meta[name="description" i], meta[name="Description"]`).First().Attr("content"); ok {
		m.Description = extract.CleanText(v)
	}
	if v, ok := doc.Find("html").First().Attr("lang"); ok {
		m.Language = strings.TrimSpace(v)
	}
	if m.Language == "" {
		if v, ok := doc.Find(`meta[http-equiv="content-language" i]`).First().Attr("content"); ok {
			m.Language = strings.TrimSpace(v)
		}
	}
	block := extract.FindAttributeBlock(doc.Selection)
	if block == nil {
		return
	}
	a := extract.ParseAttributes(block)
	if a.Len() == 0 {
		return
	}
	m.PublicAttributes = map[string]string{}
	for _, l := range a.Order {
		m.PublicAttributes[l] = a.Raw[l]
	}
	c := a.Canonical
	m.IndexNo, m.DocNo, m.Publisher = c[extract.FieldIndexNo], c[extract.FieldDocNo], c[extract.FieldPublisher]
	m.PublishDate, m.EffectiveDate = c[extract.FieldPublishDate], c[extract.FieldEffectiveDate]
	m.TopicWords, m.OpenCategory = c[extract.FieldTopicWords], c[extract.FieldOpenCategory]
}

// content chooses the part of the page the formats carry: the elements
// includeTags names, or else the main content the generic extractor finds
// (onlyMainContent), or else the whole body; excludeTags are removed
// first. It returns the part as one element and its plain text.
func content(req *fetchRequest, doc *goquery.Document, final *url.URL, m *Metadata) (*html.Node, string, error) {
	work := goquery.CloneDocument(doc)
	work.FindMatcher(dropTags).Remove()
	if req.Exclude != nil {
		work.FindMatcher(req.Exclude).Remove()
	}
	if req.Include != nil {
		// One selector group: goquery gives its matches in page order,
		// each once; an element inside one already taken is not taken
		// again.
		box := &html.Node{Type: html.ElementNode, Data: "div"}
		taken := map[*html.Node]bool{}
		work.FindMatcher(req.Include).Each(func(_ int, s *goquery.Selection) {
			n := s.Nodes[0]
			if insideAny(n, taken) {
				return
			}
			taken[n] = true
			box.AppendChild(s.Clone().Nodes[0])
		})
		return box, extract.BodyText(goquery.NewDocumentFromNode(box).Selection), nil
	}
	body := work.Find("body").First()
	if req.OnlyMainContent {
		main, err := extract.MainContent(work, final)
		if err == nil && main.Node != nil && strings.TrimSpace(main.Text) != "" {
			if main.Title != "" {
				m.Title = main.Title
			}
			return main.Node, main.Text, nil
		}
		// Nothing the extractor calls main content: the whole body, as
		// without onlyMainContent, rather than an empty answer.
	}
	if len(body.Nodes) == 0 {
		box := &html.Node{Type: html.ElementNode, Data: "div"}
		return box, "", nil
	}
	return body.Nodes[0], extract.BodyText(body), nil
}

func insideAny(n *html.Node, set map[*html.Node]bool) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if set[p] {
			return true
		}
	}
	return false
}

// absolutize makes the links and images under n absolute, so the html
// format works wherever it is shown.
func absolutize(n *html.Node, base *url.URL) {
	if n.Type == html.ElementNode {
		for i, a := range n.Attr {
			if a.Key != "href" && a.Key != "src" {
				continue
			}
			if u, err := extract.Resolve(base, a.Val); err == nil {
				n.Attr[i].Val = u.String()
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		absolutize(c, base)
	}
}
