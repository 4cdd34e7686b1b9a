package adapter

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"zhizhi/internal/config"
	"zhizhi/internal/extract"
)

// ParseList reads one list page of a template site, HTML or JSON as the
// template says. Links are made absolute against the page URL.
func ParseList(body []byte, pageURL *url.URL, t config.ListTemplate) (ListPage, error) {
	if t.Format == config.ListJSON {
		return parseListJSON(body, pageURL, t)
	}
	return parseListHTML(body, pageURL, t)
}

func compile(spec string) (extract.Selector, bool, error) {
	if strings.TrimSpace(spec) == "" {
		return extract.Selector{}, false, nil
	}
	s, err := extract.ParseSelector(spec)
	return s, err == nil, err
}

func parseListHTML(body []byte, pageURL *url.URL, t config.ListTemplate) (ListPage, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return ListPage{}, fmt.Errorf("list page: parse html: %w", err)
	}
	item, ok, err := compile(t.Item)
	if err != nil || !ok {
		return ListPage{}, fmt.Errorf("list page: item selector %q: %v", t.Item, err)
	}
	link, _, err := compile(orDefault(t.Link, "a@href"))
	if err != nil {
		return ListPage{}, fmt.Errorf("list page: link selector: %w", err)
	}
	title, hasTitle, _ := compile(t.Title)
	date, hasDate, _ := compile(t.Date)

	page := ListPage{PageCount: pageCount(body)}
	items := item.Find(doc.Selection)
	page.Matched = items.Length()
	items.Each(func(_ int, s *goquery.Selection) {
		href, ok := link.Value(s)
		if !ok || href == "" {
			return
		}
		abs, err := extract.Resolve(pageURL, href)
		if err != nil || (abs.Scheme != "http" && abs.Scheme != "https") {
			return
		}
		li := ListItem{URL: abs.String()}
		if hasTitle {
			li.Title, _ = title.Value(s)
		}
		if hasDate {
			li.Date, _ = date.Value(s)
		}
		page.Items = append(page.Items, li)
	})
	if t.NextPage != "" {
		if next, ok, _ := compile(t.NextPage); ok {
			if href, found := next.Value(doc.Selection); found && href != "" && !strings.HasPrefix(href, "javascript:") {
				if abs, err := extract.Resolve(pageURL, href); err == nil && abs.String() != pageURL.String() {
					page.Next = abs.String()
				}
			}
		}
	}
	return page, nil
}

func parseListJSON(body []byte, pageURL *url.URL, t config.ListTemplate) (ListPage, error) {
	doc, err := decodeJSON(body)
	if err != nil {
		return ListPage{}, fmt.Errorf("list feed: %w", err)
	}
	raw, ok := lookup(doc, t.Items)
	if !ok {
		return ListPage{}, fmt.Errorf("list feed: no %q in the document", t.Items)
	}
	arr, ok := raw.([]any)
	if !ok {
		return ListPage{}, fmt.Errorf("list feed: %q is not an array", t.Items)
	}
	page := ListPage{Matched: len(arr)}
	for _, x := range arr {
		v, _ := lookup(x, orDefault(t.Link, "url"))
		href := scalar(v)
		if href == "" {
			continue
		}
		abs, err := extract.Resolve(pageURL, href)
		if err != nil || (abs.Scheme != "http" && abs.Scheme != "https") {
			continue
		}
		li := ListItem{URL: abs.String()}
		if t.Title != "" {
			tv, _ := lookup(x, t.Title)
			li.Title = extract.CleanText(scalar(tv))
		}
		if t.Date != "" {
			dv, _ := lookup(x, t.Date)
			li.Date = scalar(dv)
		}
		page.Items = append(page.Items, li)
	}
	if t.NextPage != "" {
		if nv, ok := lookup(doc, t.NextPage); ok {
			if href := scalar(nv); href != "" {
				if abs, err := extract.Resolve(pageURL, href); err == nil && abs.String() != pageURL.String() {
					page.Next = abs.String()
				}
			}
		}
	}
	return page, nil
}

var (
	trsPageCount = regexp.MustCompile(`createPageHTML\(\s*['"]?(\d+)['"]?\s*,`)
	cnPageCount  = regexp.MustCompile(`共\s*(\d+)\s*页`)
)

// pageCount reads how many list pages a page says there are, or 0.
func pageCount(body []byte) int {
	for _, re := range []*regexp.Regexp{trsPageCount, cnPageCount} {
		if m := re.FindSubmatch(body); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil && n > 0 && n < 100000 {
				return n
			}
		}
	}
	return 0
}

// PageURL is the URL of list page n (0 = the entry URL itself) when the
// template paginates by pattern: "index_{n}.html" relative to the entry
// URL's directory.
func PageURL(entry *url.URL, t config.ListTemplate, n int) (string, bool) {
	if n == 0 {
		return entry.String(), true
	}
	if t.PageURL == "" {
		return "", false
	}
	rel := strings.ReplaceAll(t.PageURL, "{n}", strconv.Itoa(n))
	dir := *entry
	if i := strings.LastIndexByte(dir.Path, '/'); i >= 0 {
		dir.Path = dir.Path[:i+1]
	}
	dir.RawQuery = ""
	abs, err := extract.Resolve(&dir, rel)
	if err != nil {
		return "", false
	}
	return abs.String(), true
}

// ParseDetail reads an article page with a template's detail selectors.
// A selector that matches nothing is recorded in Missing, not an error:
// the pipeline decides what a missing title or body means.
func ParseDetail(body []byte, pageURL *url.URL, t config.DetailTemplate) (*Detail, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("detail page: parse html: %w", err)
	}
	for _, r := range t.Remove {
		if s, ok, _ := compile(r); ok {
			s.Find(doc.Selection).Remove()
		}
	}
	d := &Detail{Attributes: extract.ParseAttributes(nil)}
	get := func(name, spec string) string {
		s, ok, err := compile(spec)
		if err != nil || !ok {
			return ""
		}
		v, found := s.Value(doc.Selection)
		if !found {
			d.Missing = append(d.Missing, name)
		}
		return v
	}
	d.Title = get("title", t.Title)
	d.PublishTimeRaw = get("publish_time", t.PublishTime)
	d.Source = get("source", t.Source)

	if s, ok, _ := compile(t.Attributes); ok {
		block := s.Find(doc.Selection)
		if block.Length() == 0 {
			d.Missing = append(d.Missing, "attributes")
		}
		d.Attributes = extract.ParseAttributes(block)
	}
	if s, ok, _ := compile(t.Body); ok {
		body := s.Find(doc.Selection)
		if body.Length() == 0 {
			d.Missing = append(d.Missing, "body")
		}
		d.Text = extract.BodyText(body)
	}
	if s, ok, _ := compile(t.Attachments); ok {
		seen := map[string]bool{}
		s.Find(doc.Selection).Each(func(_ int, a *goquery.Selection) {
			href, _ := a.Attr("href")
			if s.Attr != "" {
				href, _ = a.Attr(s.Attr)
			}
			abs, err := extract.Resolve(pageURL, href)
			if href == "" || err != nil || (abs.Scheme != "http" && abs.Scheme != "https") || seen[abs.String()] {
				return
			}
			seen[abs.String()] = true
			name := extract.CleanText(a.Text())
			if name == "" {
				name = pathBase(abs.Path)
			}
			d.Attachments = append(d.Attachments, AttachmentRef{
				URL: abs.String(), Name: name, Ext: attachmentExt(name, abs.String(), ""),
			})
		})
	}
	if d.PublishTimeRaw != "" {
		if tm, _, err := extract.ParseDate(d.PublishTimeRaw); err == nil {
			d.PublishTime = &tm
		}
	}
	return d, nil
}

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
