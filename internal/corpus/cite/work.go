// Package cite owns how a corpus work is cited: one CSL-JSON item for
// citation processors (Zotero, pandoc, citeproc-js), one GB/T 7714-2015
// reference string for Chinese readers, and one BibTeX entry for LaTeX.
// Every format names the corpus release and the work's revision, so a
// citation keeps pointing at the text that was cited after the source
// page changes or disappears. The package does no I/O: the API, the
// console and MCP hand it a Work and serve what it returns.
package cite

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Work is what a citation needs to know about one revision of a corpus
// work as it stands in one release.
type Work struct {
	ID       string // stable public work id
	Revision int    // the work's content revision, counted by the corpus
	Release  string // the immutable corpus release that holds this revision
	Title    string
	// IssuingBody is the 发布机构 (发文机关). Co-issued documents name
	// several bodies, separated by 、，,;； or by spaces between Chinese
	// names ("国家发展改革委 国家能源局").
	IssuingBody string
	// Authority is the portal or department that publishes the document
	// on the web; empty means the issuing body.
	Authority string
	DocNo     string // 文号, e.g. 国办发〔2024〕12号
	// Category is the genre or content category as collected from the
	// portal (规范性文件, 法规, 规划计划, 工作报告, 政策解读 …).
	Category string
	// Issued is the 发布日期 as collected: YYYY, YYYY-MM or YYYY-MM-DD
	// (also with / or . separators, or 2024年5月1日); empty when unknown.
	Issued     string
	Accessed   time.Time // when zhizhi fetched the source; zero when unknown
	URL        string    // the source page on the government portal
	ReleaseURL string    // where zhizhi serves the cited text, optional
}

// china is the calendar a Chinese reader dates a citation by. A fixed
// offset (China has no daylight saving) avoids depending on tzdata.
var china = time.FixedZone("CST", 8*60*60)

// date is a calendar date with optional month and day (0 = absent).
type date struct{ y, m, d int }

func (d date) zero() bool { return d.y == 0 }

// iso renders 2024, 2024-05 or 2024-05-01.
func (d date) iso() string {
	switch {
	case d.y == 0:
		return ""
	case d.m == 0:
		return fmt.Sprintf("%04d", d.y)
	case d.d == 0:
		return fmt.Sprintf("%04d-%02d", d.y, d.m)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.y, d.m, d.d)
}

// parts is the CSL date-parts row.
func (d date) parts() []int {
	switch {
	case d.m == 0:
		return []int{d.y}
	case d.d == 0:
		return []int{d.y, d.m}
	}
	return []int{d.y, d.m, d.d}
}

var issuedPattern = regexp.MustCompile(`^(\d{4})(?:[-/.年](\d{1,2})(?:[-/.月](\d{1,2})日?)?月?)?年?$`)

// parseIssued reads the collected publication date.
func parseIssued(s string) (date, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return date{}, nil
	}
	m := issuedPattern.FindStringSubmatch(s)
	if m == nil {
		return date{}, fmt.Errorf("issued %q is not a date: give YYYY, YYYY-MM or YYYY-MM-DD", s)
	}
	var d date
	d.y, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		d.m, _ = strconv.Atoi(m[2])
		if d.m < 1 || d.m > 12 {
			return date{}, fmt.Errorf("issued %q has month %d: give a month from 1 to 12", s, d.m)
		}
	}
	if m[3] != "" {
		d.d, _ = strconv.Atoi(m[3])
		t := time.Date(d.y, time.Month(d.m), d.d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d.d {
			return date{}, fmt.Errorf("issued %q is not a day of the calendar", s)
		}
	}
	if d.y < 1000 {
		return date{}, fmt.Errorf("issued %q has year %d: give a four-digit year", s, d.y)
	}
	return d, nil
}

// accessedDate is the access day in China's calendar.
func accessedDate(t time.Time) date {
	if t.IsZero() {
		return date{}
	}
	t = t.In(china)
	return date{t.Year(), int(t.Month()), t.Day()}
}

// checked is a Work that passed validation, with what every format needs.
type checked struct {
	Work
	issuers  []string
	issued   date
	accessed date
	typ      string
}

// check validates w and resolves what the formats share. Errors name the
// work and the field, and say what to give instead.
func check(w Work) (checked, error) {
	c := checked{Work: w}
	c.ID = strings.TrimSpace(w.ID)
	c.Title = strings.TrimSpace(w.Title)
	c.Release = strings.TrimSpace(w.Release)
	c.URL = strings.TrimSpace(w.URL)
	c.ReleaseURL = strings.TrimSpace(w.ReleaseURL)
	c.DocNo = strings.TrimSpace(w.DocNo)
	c.Authority = strings.TrimSpace(w.Authority)
	c.IssuingBody = strings.TrimSpace(w.IssuingBody)
	name := c.ID
	if name == "" {
		name = "(no id)"
	}
	fail := func(format string, a ...any) (checked, error) {
		return checked{}, fmt.Errorf("cite work %s: "+format, append([]any{name}, a...)...)
	}
	switch {
	case c.ID == "":
		return fail("no work id: a citation is keyed by the work's stable id")
	case strings.IndexFunc(c.ID, unicode.IsSpace) >= 0:
		return fail("work id %q has white space: stable ids have none", c.ID)
	case c.Title == "":
		return fail("no title: collect the document's title before citing it")
	case c.URL == "":
		return fail("no URL: a web document is cited with the address it was collected from")
	case c.Release == "":
		return fail("no release: only a work in a corpus release can be cited, so the citation keeps pointing at the cited text")
	case w.Revision < 0:
		return fail("revision %d is negative: revisions count up from 0", w.Revision)
	}
	for _, u := range []struct{ field, v string }{{"URL", c.URL}, {"release URL", c.ReleaseURL}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fail("%s %q is not an absolute http(s) address", u.field, u.v)
		}
	}
	var err error
	if c.issued, err = parseIssued(w.Issued); err != nil {
		return fail("%v", err)
	}
	c.accessed = accessedDate(w.Accessed)
	c.issuers = splitIssuers(c.IssuingBody)
	if c.Authority == "" && len(c.issuers) > 0 {
		c.Authority = strings.Join(c.issuers, "、")
	}
	c.typ = Type(w)
	return c, nil
}

// splitIssuers separates co-issuing bodies. Chinese documents list them
// with spaces or 、; a space between two Latin words stays inside a name.
func splitIssuers(s string) []string {
	var out []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if n := strings.TrimSpace(string(cur)); n != "" {
			out = append(out, n)
		}
		cur = cur[:0]
	}
	for i, r := range rs {
		switch {
		case strings.ContainsRune("、，,;；/", r):
			flush()
		case unicode.IsSpace(r):
			prev, next := lastNonSpace(cur), nextNonSpace(rs[i+1:])
			if unicode.Is(unicode.Han, prev) || unicode.Is(unicode.Han, next) {
				flush()
			} else if len(cur) > 0 {
				cur = append(cur, ' ')
			}
		default:
			cur = append(cur, r)
		}
	}
	flush()
	// A space run inside a Latin name collapsed to one space above; drop
	// doubled spaces left by runs.
	for i, n := range out {
		out[i] = strings.Join(strings.Fields(n), " ")
	}
	return out
}

func lastNonSpace(rs []rune) rune {
	for i := len(rs) - 1; i >= 0; i-- {
		if !unicode.IsSpace(rs[i]) {
			return rs[i]
		}
	}
	return 0
}

func nextNonSpace(rs []rune) rune {
	for _, r := range rs {
		if !unicode.IsSpace(r) {
			return r
		}
	}
	return 0
}

// Key is the citation key of w: the same in BibTeX and in CSL-JSON's
// citation-key, derived from the work id and revision only, so one
// revision keeps one key across releases and formats. Characters a
// BibTeX key cannot hold are written as _XXXX (their code point in hex).
func Key(w Work) string {
	var b strings.Builder
	b.WriteString("zhizhi-")
	for _, r := range strings.TrimSpace(w.ID) {
		switch {
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' || r == ':'):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_%04X", r)
		}
	}
	fmt.Fprintf(&b, "-r%d", w.Revision)
	return b.String()
}

// ItemID is the CSL-JSON id: the work, its revision and the release, so
// two citations of different releases never merge in a processor.
func ItemID(w Work) string {
	return fmt.Sprintf("zhizhi:%s:r%d@%s", strings.TrimSpace(w.ID), w.Revision, strings.TrimSpace(w.Release))
}

// publisher is the portal that published the document when the
// collector named one apart from the issuing bodies; "" otherwise, so a
// bibliography does not print the issuer twice.
func (c checked) publisher() string {
	if c.Authority == strings.Join(c.issuers, "、") {
		return ""
	}
	return c.Authority
}

// provenance is the sentence every format carries about what was cited,
// in Chinese because a reader sees it in a bibliography.
func (c checked) provenance() string {
	s := fmt.Sprintf("知止语料库 发布版 %s，作品 %s，修订 %d", c.Release, c.ID, c.Revision)
	if c.ReleaseURL != "" {
		s += "，存档 " + c.ReleaseURL
	}
	return s
}
