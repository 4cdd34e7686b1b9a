package cite

import (
	"fmt"
	"strconv"
	"strings"
)

var months = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// BibTeX is w as one BibTeX entry, readable by BibTeX with natbib styles
// and by biblatex/biber:
//
//   - @techreport for reports and plans (institution = the issuing
//     body), @misc for everything else. biblatex knows @legislation but
//     its standard styles print it as @misc, and BibTeX does not know it.
//   - The key is Key(w); issuing bodies are corporate authors in double
//     braces, so BibTeX never splits "国家发展改革委" into given and
//     family names or an English name at " and ".
//   - Text fields escape \ { } % & # _ $ ^ ~ for LaTeX; UTF-8 is
//     kept. url is written as biblatex reads it (verbatim): only { } \
//     and spaces are percent-encoded there.
//   - year/month for BibTeX, date/urldate in ISO form for biblatex; the
//     release, work id and revision in note (printed) and in zhizhi_*
//     fields (kept by reference managers; not verbatim, so TeX-escaped).
func BibTeX(w Work) (string, error) {
	c, err := check(w)
	if err != nil {
		return "", err
	}
	kind := "misc"
	if c.typ == TypeReport {
		kind = "techreport"
	}
	var fields [][2]string
	add := func(name, value string) {
		if value != "" {
			fields = append(fields, [2]string{name, value})
		}
	}
	var authors []string
	for _, n := range c.issuers {
		authors = append(authors, "{"+texEscape(n)+"}")
	}
	add("author", strings.Join(authors, " and "))
	add("title", texEscape(c.Title))
	add("number", texEscape(c.DocNo))
	if kind == "techreport" {
		add("type", texEscape(c.Category))
		add("institution", texEscape(strings.Join(c.issuers, "、")))
	}
	add("publisher", texEscape(c.publisher()))
	if !c.issued.zero() {
		add("year", strconv.Itoa(c.issued.y))
		if c.issued.m > 0 {
			fields = append(fields, [2]string{"month", months[c.issued.m-1]}) // a macro, not braced
		}
		add("date", c.issued.iso())
	}
	add("url", urlEscape(c.URL))
	if !c.accessed.zero() {
		add("urldate", c.accessed.iso())
	}
	add("langid", "chinese")
	add("note", texEscape(c.provenance()))
	add("zhizhi_work_id", texEscape(c.ID))
	add("zhizhi_revision", strconv.Itoa(c.Revision))
	add("zhizhi_release", texEscape(c.Release))
	add("zhizhi_release_url", texEscape(c.ReleaseURL)) // not a verbatim field: TeX rules apply

	var b strings.Builder
	fmt.Fprintf(&b, "@%s{%s,\n", kind, Key(c.Work))
	for _, f := range fields {
		if f[0] == "month" {
			fmt.Fprintf(&b, "  %s = %s,\n", f[0], f[1])
			continue
		}
		fmt.Fprintf(&b, "  %s = {%s},\n", f[0], f[1])
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// texEscape writes s so that (La)TeX prints it as it is.
func texEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '{', '}', '%', '&', '#', '_', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// urlEscape percent-encodes what would unbalance a braced BibTeX field
// or end it early; the URL stays the same address.
func urlEscape(s string) string {
	return strings.NewReplacer("{", "%7B", "}", "%7D", `\`, "%5C", " ", "%20").Replace(s)
}
