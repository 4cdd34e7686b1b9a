package extract

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
)

// attrSuffix is the "@attr" tail of a selector: an attribute name after the
// last '@', so "a@href" reads href while "a[href*='@']" stays a selector.
// internal/config lints with the same rule.
var attrSuffix = regexp.MustCompile(`@([A-Za-z_:][-A-Za-z0-9_:.]*)$`)

// Selector is a template selector "css" or "css@attr": the CSS part picks
// elements; with @attr the value is that attribute, otherwise the text.
type Selector struct {
	CSS  string
	Attr string
	sel  cascadia.Selector
}

// ParseSelector compiles a template selector.
func ParseSelector(spec string) (Selector, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Selector{}, fmt.Errorf("selector is empty")
	}
	css, attr := spec, ""
	if loc := attrSuffix.FindStringSubmatchIndex(spec); loc != nil {
		css, attr = strings.TrimSpace(spec[:loc[0]]), spec[loc[2]:loc[3]]
	}
	if css == "" {
		return Selector{}, fmt.Errorf("selector %q has no CSS part", spec)
	}
	s, err := cascadia.Compile(css)
	if err != nil {
		return Selector{}, fmt.Errorf("selector %q: %w", spec, err)
	}
	return Selector{CSS: css, Attr: attr, sel: s}, nil
}

// Find returns the matching elements under root.
func (s Selector) Find(root *goquery.Selection) *goquery.Selection {
	return root.FindMatcher(s.sel)
}

// Value returns the value of the first match: its attribute or its text,
// and whether anything matched.
func (s Selector) Value(root *goquery.Selection) (string, bool) {
	m := s.Find(root).First()
	if m.Length() == 0 {
		return "", false
	}
	return s.of(m), true
}

// Values returns the value of every match.
func (s Selector) Values(root *goquery.Selection) []string {
	var out []string
	s.Find(root).Each(func(_ int, m *goquery.Selection) {
		if v := s.of(m); v != "" {
			out = append(out, v)
		}
	})
	return out
}

func (s Selector) of(m *goquery.Selection) string {
	if s.Attr != "" {
		v, _ := m.Attr(s.Attr)
		return strings.TrimSpace(v)
	}
	return CleanText(m.Text())
}
