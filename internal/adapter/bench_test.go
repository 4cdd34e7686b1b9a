package adapter

import (
	"net/url"
	"sync"
	"testing"

	"zhizhi/internal/config"
)

// How fast the detail parsers read the simulated web's pages. The pages are
// fetched once per test binary (the sim closes again right after), decoded
// to UTF-8 as the fetcher hands them over, so the benchmarks measure parsing
// alone. See docs/performance.md for how to run them and the numbers.

// benchPage is one pre-fetched detail page and the parser its site uses.
type benchPage struct {
	url  *url.URL
	html []byte
	tmpl config.DetailTemplate
}

var (
	benchOnce  sync.Once
	benchPages map[string][]benchPage // "template" | "gkmlpt"
	benchErr   error
)

// loadBenchPages fetches every full-access article page of the sim (seed
// 1, scale 1): the template sites' (lianzhou, gd_ref, gov_ref) and the
// gkmlpt sites'.
func loadBenchPages(b *testing.B) map[string][]benchPage {
	b.Helper()
	benchOnce.Do(func() {
		web := startSimWeb(b)
		defer web.world.Close()
		pages := map[string][]benchPage{}
		for _, ta := range web.world.Truth() {
			if ta.Access != "full" {
				continue
			}
			sf := web.site(ta.SiteCode)
			if sf == nil {
				continue
			}
			kind := "template"
			if sf.CMSAdapter != "" {
				kind = "gkmlpt"
			}
			tmpl, err := web.detailTemplate(sf, ta.TargetCode)
			if err != nil {
				benchErr = err
				return
			}
			html, err := web.page(ta.URL, true)
			if err != nil {
				benchErr = err
				return
			}
			u, err := url.Parse(ta.URL)
			if err != nil {
				benchErr = err
				return
			}
			pages[kind] = append(pages[kind], benchPage{url: u, html: html, tmpl: tmpl})
		}
		benchPages = pages
	})
	if benchErr != nil {
		b.Fatalf("fetch benchmark pages: %v", benchErr)
	}
	return benchPages
}

func benchmarkParseDetail(b *testing.B, kind string) {
	pages := loadBenchPages(b)[kind]
	if len(pages) == 0 {
		b.Fatalf("no %s pages in the sim", kind)
	}
	total := 0
	for _, p := range pages {
		total += len(p.html)
	}
	b.SetBytes(int64(total / len(pages)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := pages[i%len(pages)]
		d, err := ParseDetail(p.html, p.url, p.tmpl)
		if err != nil || d.Title == "" {
			b.Fatalf("%s: %v (title %q)", p.url, err, d.Title)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkParseDetailTemplate parses the template sites' article pages
// (GB18030 lianzhou, gd_ref, gov_ref) with their YAML selectors.
func BenchmarkParseDetailTemplate(b *testing.B) { benchmarkParseDetail(b, "template") }

// BenchmarkParseDetailGkmlpt parses the gkmlpt sites' article pages with
// the adapter's detail selectors.
func BenchmarkParseDetailGkmlpt(b *testing.B) { benchmarkParseDetail(b, "gkmlpt") }
