package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/andybalholm/cascadia"
	"go.yaml.in/yaml/v3"
)

// Template is a template site's parser: how to read its list pages and its
// article pages (docs/config.md). A target's parser_override has the same
// shape and is merged over it key by key.
type Template struct {
	List   ListTemplate   `json:"list,omitzero"`
	Detail DetailTemplate `json:"detail,omitzero"`
	Pos    Positions      `json:"-"`
}

// ListTemplate reads a list page. For format html the fields are selectors
// in the "css selector@attr" convention (see SplitSelector); for format json
// Items, Link, Title, Date and NextPage are dotted paths into the document.
type ListTemplate struct {
	Format   string    `json:"format,omitempty"` // html (default) | json
	Item     string    `json:"item,omitempty"`   // html: one list item
	Items    string    `json:"items,omitempty"`  // json: dotted path of the array
	Link     string    `json:"link,omitempty"`
	Title    string    `json:"title,omitempty"`
	Date     string    `json:"date,omitempty"`
	NextPage string    `json:"next_page,omitempty"`
	PageURL  string    `json:"page_url,omitempty"` // relative to entry_url; {n} = 1, 2, …
	MaxPages int       `json:"max_pages,omitempty"`
	Pos      Positions `json:"-"`
}

// DetailTemplate reads an article page; every field is a selector.
type DetailTemplate struct {
	Title       string    `json:"title,omitempty"`
	Body        string    `json:"body,omitempty"`
	PublishTime string    `json:"publish_time,omitempty"`
	Source      string    `json:"source,omitempty"`
	Attributes  string    `json:"attributes,omitempty"`
	Attachments string    `json:"attachments,omitempty"`
	Remove      []string  `json:"remove,omitempty"`
	Pos         Positions `json:"-"`
}

// Formats of a template list page.
const (
	ListHTML = "html"
	ListJSON = "json"
)

// MaxPagesLimit bounds list pagination: beyond it a template is more likely
// wrong than the column that deep.
const MaxPagesLimit = 1000

var (
	templateKeys = []string{"list", "detail"}
	listKeys     = []string{"format", "item", "items", "link", "title", "date", "next_page", "page_url", "max_pages"}
	detailKeys   = []string{"title", "body", "publish_time", "source", "attributes", "attachments", "remove"}
)

// attrSuffix matches the "@attr" tail of a selector: an attribute name after
// the last '@', so "a@href" reads href and "a[href*='@']" stays a selector.
var attrSuffix = regexp.MustCompile(`@([A-Za-z_:][-A-Za-z0-9_:.]*)$`)

// SplitSelector splits the "css selector@attr" convention: "a@href" →
// ("a", "href"); "span.date" → ("span.date", "") meaning the element's text.
func SplitSelector(s string) (css, attr string) {
	s = strings.TrimSpace(s)
	if loc := attrSuffix.FindStringSubmatchIndex(s); loc != nil {
		return strings.TrimSpace(s[:loc[0]]), s[loc[2]:loc[3]]
	}
	return s, ""
}

// compileSelector checks the CSS part of a "selector@attr" string.
func compileSelector(s string) error {
	css, _ := SplitSelector(s)
	if css == "" {
		return fmt.Errorf("empty selector")
	}
	_, err := cascadia.ParseGroup(css)
	return err
}

// readTemplate decodes a template (or, when override is true, a
// parser_override: every key optional) and checks its selectors.
func (r *reporter) readTemplate(file string, n *yaml.Node, what string, override bool) *Template {
	m := r.readMapping(file, n, what, templateKeys, nil)
	t := &Template{Pos: m.positions()}
	if !override {
		if !m.has("list") {
			m.missing("list", "{item: \"ul li\", link: \"a@href\", title: \"a\", date: \"span\"}")
		}
		if !m.has("detail") {
			m.missing("detail", "{title: \"h1\", body: \"div.content\"}")
		}
	}
	if m.has("list") {
		t.List = r.readList(file, m.vals["list"], what+" list", override)
	}
	if m.has("detail") {
		t.Detail = r.readDetail(file, m.vals["detail"], what+" detail", override)
	}
	return t
}

func (r *reporter) readList(file string, n *yaml.Node, what string, override bool) ListTemplate {
	m := r.readMapping(file, n, what, listKeys, nil)
	l := ListTemplate{Pos: m.positions()}
	l.Format = m.str("format", false, "html")
	m.oneOf("format", l.Format, []string{ListHTML, ListJSON})
	l.Item = m.str("item", false, `"ul.list li"`)
	l.Items = m.str("items", false, "data.list")
	l.Link = m.str("link", false, `"a@href"`)
	l.Title = m.str("title", false, `"a"`)
	l.Date = m.str("date", false, `"span.date"`)
	l.NextPage = m.str("next_page", false, `"a.next@href"`)
	l.PageURL = m.str("page_url", false, `"index_{n}.html"`)
	if v, ok := m.integer("max_pages"); ok {
		if v < 1 || v > MaxPagesLimit {
			r.errorf(m.valPos("max_pages"), fmt.Sprintf("use a number from 1 to %d", MaxPagesLimit), "max_pages %d is out of range", v)
		} else {
			l.MaxPages = int(v)
		}
	}
	isJSON := l.Format == ListJSON
	if !override {
		if isJSON && l.Items == "" && !m.has("items") {
			m.missing("items", "data.list")
		}
		if !isJSON && l.Item == "" && !m.has("item") {
			m.missing("item", `"ul.list li"`)
		}
		if l.Link == "" && !m.has("link") {
			m.missing("link", `"a@href"`)
		}
	}
	if isJSON && l.Item != "" {
		r.errorf(m.keyPos("item"), "use items (a dotted path to the array) for a json list", "item is a selector, but this list has format json")
	}
	if !isJSON && l.Items != "" && (l.Format == "" || l.Format == ListHTML) {
		r.errorf(m.keyPos("items"), "add `format: json`, or use item (a CSS selector) for an html list", "items is a json path, but this list has format html")
	}
	if l.PageURL != "" && !strings.Contains(l.PageURL, "{n}") {
		r.errorf(m.valPos("page_url"), "put {n} where the page number goes, e.g. index_{n}.html", "page_url %q has no {n}", l.PageURL)
	}
	if !isJSON {
		r.checkSelectors(m, map[string]string{"item": l.Item, "link": l.Link, "title": l.Title, "date": l.Date, "next_page": l.NextPage})
	}
	return l
}

func (r *reporter) readDetail(file string, n *yaml.Node, what string, override bool) DetailTemplate {
	return r.detailFrom(r.readMapping(file, n, what, detailKeys, nil), override)
}

// detailFrom reads the detail selectors of an already checked mapping (a
// template's detail, or an adapter's, which adds url_pattern).
func (r *reporter) detailFrom(m *mapping, override bool) DetailTemplate {
	d := DetailTemplate{Pos: m.positions()}
	d.Title = m.str("title", !override, `"h1"`)
	d.Body = m.str("body", !override, `"div.content"`)
	d.PublishTime = m.str("publish_time", false, `"meta[name=PubDate]@content"`)
	d.Source = m.str("source", false, `"span.source"`)
	d.Attributes = m.str("attributes", false, `"table.attrs"`)
	d.Attachments = m.str("attachments", false, `"a[href$='.pdf']"`)
	d.Remove = m.strList("remove")
	r.checkSelectors(m, map[string]string{"title": d.Title, "body": d.Body, "publish_time": d.PublishTime,
		"source": d.Source, "attributes": d.Attributes, "attachments": d.Attachments})
	// Check each remove selector where it is written; strList above has
	// already reported a value of the wrong type.
	if v, ok := m.vals["remove"]; ok {
		items := v.Content
		if v.Kind == yaml.ScalarNode {
			items = []*yaml.Node{v}
		} else if v.Kind != yaml.SequenceNode {
			items = nil
		}
		for i, item := range items {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" || item.Value == "" {
				continue
			}
			if err := compileSelector(item.Value); err != nil {
				r.errorf(m.pos(item), "fix the CSS selector (quote it when it holds ':' or '#')", "remove[%d] selector %q does not compile: %v", i, item.Value, err)
			}
		}
	}
	return d
}

// checkSelectors compiles each non-empty selector of m, keyed by its key.
func (r *reporter) checkSelectors(m *mapping, sels map[string]string) {
	for key, s := range sels {
		if s == "" {
			continue
		}
		if err := compileSelector(s); err != nil {
			r.errorf(m.valPos(key), "fix the CSS selector; write \"selector@attr\" to read an attribute",
				"%s selector %q in %s does not compile: %v", key, s, m.what, err)
		}
	}
}

// IsZero reports whether no key of the list template is set, so an empty
// section is left out of parser_override JSON.
func (l ListTemplate) IsZero() bool {
	return l.Format == "" && l.Item == "" && l.Items == "" && l.Link == "" && l.Title == "" &&
		l.Date == "" && l.NextPage == "" && l.PageURL == "" && l.MaxPages == 0
}

// IsZero reports whether no key of the detail template is set.
func (d DetailTemplate) IsZero() bool {
	return d.Title == "" && d.Body == "" && d.PublishTime == "" && d.Source == "" &&
		d.Attributes == "" && d.Attachments == "" && d.Remove == nil
}

// Merge returns t with every key set in override replacing t's, key by key
// (effective parser = site template + target override).
// Either may be nil.
func (t *Template) Merge(override *Template) *Template {
	if t == nil && override == nil {
		return nil
	}
	var out Template
	if t != nil {
		out = *t
		out.Detail.Remove = append([]string(nil), t.Detail.Remove...)
	}
	out.Pos = nil
	out.List.Pos = nil
	out.Detail.Pos = nil
	if override == nil {
		return &out
	}
	o := override
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.List.Format, o.List.Format)
	set(&out.List.Item, o.List.Item)
	set(&out.List.Items, o.List.Items)
	set(&out.List.Link, o.List.Link)
	set(&out.List.Title, o.List.Title)
	set(&out.List.Date, o.List.Date)
	set(&out.List.NextPage, o.List.NextPage)
	set(&out.List.PageURL, o.List.PageURL)
	if o.List.MaxPages != 0 {
		out.List.MaxPages = o.List.MaxPages
	}
	set(&out.Detail.Title, o.Detail.Title)
	set(&out.Detail.Body, o.Detail.Body)
	set(&out.Detail.PublishTime, o.Detail.PublishTime)
	set(&out.Detail.Source, o.Detail.Source)
	set(&out.Detail.Attributes, o.Detail.Attributes)
	set(&out.Detail.Attachments, o.Detail.Attachments)
	if o.Detail.Remove != nil {
		out.Detail.Remove = append([]string(nil), o.Detail.Remove...)
	}
	return &out
}
