package onboard

import (
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"zhizhi/internal/config"
)

func gkmlptAdapter(t *testing.T) *config.Adapter {
	t.Helper()
	b, problems := config.Load(bundledConfig)
	if config.HasErrors(problems) {
		t.Fatalf("bundled config: %v", config.Errors(problems))
	}
	a := b.CMS["gkmlpt"]
	if a == nil {
		t.Fatal("no gkmlpt adapter in the bundled config")
	}
	return a
}

// TestMatchDetect: a home page is gkmlpt when it links to its own
// /gkmlpt/ pages or carries the CMS's config object; a link to another
// site's gkmlpt catalogue (a county page pointing at the city portal) says
// nothing about this site. Dept paths come from the links to this host's
// dept index pages only.
func TestMatchDetect(t *testing.T) {
	a := gkmlptAdapter(t)
	page, _ := url.Parse("http://www.county.gov.test/")
	for _, tc := range []struct {
		name  string
		html  string
		match bool
		depts string
	}{
		{"own dept links", `<a href="/fgj/gkmlpt/index">发展和改革局</a><a href="http://www.county.gov.test/jyj/gkmlpt/index">教育局</a><a href="/fgj/gkmlpt/index">again</a>`, true, "fgj jyj"},
		{"config object", `<script>window._CONFIG = {SID: '1'}</script>`, true, ""},
		{"another site's catalogue", `<a href="http://www.qingyuan.gov.test/qyfgw/gkmlpt/index">市发改局</a>`, false, ""},
		{"plain page", `<a href="/zwgk/tzgg/">通知公告</a><p>gkmlpt</p>`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			html := "<html><body>" + tc.html + "</body></html>"
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
			if err != nil {
				t.Fatal(err)
			}
			links := pageLinks(doc, page)
			ev := matchDetect(a.Detect, page, links, []byte(html))
			if (ev != "") != tc.match {
				t.Errorf("evidence %q, want match %v", ev, tc.match)
			}
			var paths []string
			for _, d := range deptLinks(a, page, links) {
				paths = append(paths, d.DeptPath)
			}
			if strings.Join(paths, " ") != tc.depts {
				t.Errorf("dept paths %q, want %q", paths, tc.depts)
			}
		})
	}
}

// TestTrimDisclosure: the display name a dept link gives, without the
// words a disclosure catalogue adds to it.
func TestTrimDisclosure(t *testing.T) {
	for in, want := range map[string]string{
		"清远市教育局政府信息公开":  "清远市教育局",
		"清远市人民政府政府信息公开": "清远市人民政府",
		"清远市人民政府信息公开":   "清远市人民政府",
		"清远市发展和改革局":     "清远市发展和改革局",
		"政府信息公开":        "政府信息公开",
	} {
		if got := trimDisclosure(in); got != want {
			t.Errorf("trimDisclosure(%q) = %q, want %q", in, got, want)
		}
	}
}
