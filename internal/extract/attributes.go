package extract

import (
	"strings"
	"unicode"

	"github.com/PuerkitoBio/goquery"
)

// Canonical attribute fields (frozen at seven).
const (
	FieldIndexNo       = "index_no"
	FieldDocNo         = "doc_no"
	FieldPublisher     = "publisher"
	FieldPublishDate   = "publish_date"
	FieldEffectiveDate = "effective_date"
	FieldTopicWords    = "topic_words"
	FieldOpenCategory  = "open_category"
)

// canonicalLabels maps a normalized label to its canonical field.
var canonicalLabels = map[string]string{
	"索引号": FieldIndexNo, "信息索引": FieldIndexNo,
	"文号": FieldDocNo, "发文字号": FieldDocNo,
	"发布机构": FieldPublisher, "发文机关": FieldPublisher, "发文机构": FieldPublisher, "发布单位": FieldPublisher,
	"发布日期": FieldPublishDate, "发布时间": FieldPublishDate,
	"成文日期": FieldEffectiveDate, "生成日期": FieldEffectiveDate, "发文日期": FieldEffectiveDate,
	"主题词": FieldTopicWords, "关键词": FieldTopicWords,
	"分类": FieldOpenCategory, "主题分类": FieldOpenCategory, "信息类别": FieldOpenCategory, "公开分类": FieldOpenCategory,
}

// NormalizeLabel removes all white space (U+3000 included) and a trailing
// colon, full-width or not: "标\u3000\u3000题：" → "标题".
func NormalizeLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsSpace(r) || r == '\u3000' || r == '\u00a0' || r == '\u200b' {
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	for {
		trimmed := strings.TrimSuffix(strings.TrimSuffix(out, "："), ":")
		if trimmed == out {
			return out
		}
		out = trimmed
	}
}

// CanonicalField returns the canonical field for a label, or "" when the
// label is not one of the seven.
func CanonicalField(label string) string { return canonicalLabels[NormalizeLabel(label)] }

// Attributes is an attribute block: every label found, in page order, and
// the canonical seven taken from it.
type Attributes struct {
	Raw       map[string]string // normalized label → value, every label found
	Order     []string          // labels in page order
	Canonical map[string]string // canonical field → value
}

func newAttributes() *Attributes {
	return &Attributes{Raw: map[string]string{}, Canonical: map[string]string{}}
}

// add records one label/value pair. The first occurrence of a label wins:
// portals sometimes repeat a label in a summary line below the block.
func (a *Attributes) add(label, value string) {
	label = NormalizeLabel(label)
	value = CleanText(value)
	if label == "" || len([]rune(label)) > 12 {
		return
	}
	if _, seen := a.Raw[label]; seen {
		return
	}
	a.Raw[label] = value
	a.Order = append(a.Order, label)
	if f := canonicalLabels[label]; f != "" && value != "" {
		if _, ok := a.Canonical[f]; !ok {
			a.Canonical[f] = value
		}
	}
}

// Len is the number of labels found.
func (a *Attributes) Len() int { return len(a.Order) }

// ParseAttributes reads an attribute block in whichever shape it comes:
// <table> rows of label/value cells (one or several pairs per row), th/td,
// dl/dt/dd, li or p items written "标签：值", or label/value div pairs.
func ParseAttributes(sel *goquery.Selection) *Attributes {
	a := newAttributes()
	if sel == nil || sel.Length() == 0 {
		return a
	}
	sel.Each(func(_ int, s *goquery.Selection) {
		switch {
		case s.Is("table") || s.Find("tr").Length() > 0:
			parseTable(s, a)
		case s.Is("dl") || s.Find("dt").Length() > 0:
			parseDL(s, a)
		default:
			parseItems(s, a)
		}
	})
	return a
}

func parseTable(s *goquery.Selection, a *Attributes) {
	s.Find("tr").Each(func(_ int, tr *goquery.Selection) {
		cells := tr.ChildrenFiltered("th,td")
		n := cells.Length()
		for i := 0; i < n; {
			c := cells.Eq(i)
			// A cell reading "标签：值" stands alone; a label cell pairs with
			// the cell after it (one or several pairs per row).
			if CanonicalField(c.Text()) == "" {
				if l, v, ok := splitLabelValue(c.Text()); ok && strings.TrimSpace(v) != "" {
					a.add(l, v)
					i++
					continue
				}
			}
			if i+1 < n && looksLikeLabel(c) {
				a.add(c.Text(), cells.Eq(i+1).Text())
				i += 2
				continue
			}
			i++
		}
	})
}

// looksLikeLabel is true for th cells, cells ending in a colon and short
// cells: a label cell on the portals is at most a few characters.
func looksLikeLabel(c *goquery.Selection) bool {
	if c.Is("th") {
		return true
	}
	t := strings.TrimSpace(c.Text())
	if strings.HasSuffix(t, "：") || strings.HasSuffix(t, ":") {
		return true
	}
	return len([]rune(NormalizeLabel(t))) <= 6
}

func parseDL(s *goquery.Selection, a *Attributes) {
	s.Find("dt").Each(func(_ int, dt *goquery.Selection) {
		dd := dt.NextFiltered("dd")
		if dd.Length() == 0 {
			if l, v, ok := splitLabelValue(dt.Text()); ok {
				a.add(l, v)
			}
			return
		}
		a.add(dt.Text(), dd.Text())
	})
}

func parseItems(s *goquery.Selection, a *Attributes) {
	items := s.Find("li, p")
	if items.Length() == 0 {
		// label/value divs or spans: <div><span class=label>…</span><span>…</span></div>
		s.Children().Each(func(_ int, row *goquery.Selection) {
			kids := row.Children()
			if kids.Length() >= 2 {
				for i := 0; i+1 < kids.Length(); i += 2 {
					a.add(kids.Eq(i).Text(), kids.Eq(i+1).Text())
				}
				return
			}
			if l, v, ok := splitLabelValue(row.Text()); ok {
				a.add(l, v)
			}
		})
		return
	}
	items.Each(func(_ int, li *goquery.Selection) {
		kids := li.Children()
		if kids.Length() == 2 && !strings.ContainsAny(kids.Eq(1).Text(), "：:") {
			a.add(kids.Eq(0).Text(), kids.Eq(1).Text())
			return
		}
		if l, v, ok := splitLabelValue(li.Text()); ok {
			a.add(l, v)
		}
	})
}

// splitLabelValue splits "标签：值" (full-width or ASCII colon) at the first
// colon, refusing text whose label part is too long to be a label.
func splitLabelValue(t string) (label, value string, ok bool) {
	t = strings.TrimSpace(t)
	i := strings.IndexAny(t, "：:")
	if i <= 0 {
		return "", "", false
	}
	label = t[:i]
	_, size := firstRune(t[i:])
	value = t[i+size:]
	if n := len([]rune(NormalizeLabel(label))); n == 0 || n > 12 {
		return "", "", false
	}
	return label, value, true
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}
