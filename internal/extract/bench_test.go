package extract_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"zhizhi/internal/charset"
	"zhizhi/internal/extract"
	"zhizhi/internal/sim"
)

// BenchmarkGenericExtract runs the generic extractor (go-trafilatura behind
// extract.Generic) over the same simulated article pages the adapter
// benchmarks parse with templates, so docs/performance.md can set the two
// side by side: what a page costs when a site has no template.

type genericPage struct {
	url  *url.URL
	html []byte
}

var (
	genericOnce  sync.Once
	genericPages map[string][]genericPage // "template" | "gkmlpt"
	genericErr   error
)

// loadGenericPages fetches every full-access article page of the sim (seed
// 1, scale 1) once per test binary, decoded to UTF-8 as the fetcher would.
// The client reaches only the sim's hosts and carries the city portal's
// clearance cookie.
func loadGenericPages(b *testing.B) map[string][]genericPage {
	b.Helper()
	genericOnce.Do(func() { genericPages, genericErr = fetchSimPages() })
	if genericErr != nil {
		b.Fatalf("fetch benchmark pages: %v", genericErr)
	}
	return genericPages
}

func fetchSimPages() (map[string][]genericPage, error) {
	ctx := context.Background()
	w, err := sim.Start(ctx, sim.Options{Seed: 1, Scale: 1})
	if err != nil {
		return nil, fmt.Errorf("start sim: %w", err)
	}
	defer w.Close()
	client := w.HTTPClient()
	defer client.CloseIdleConnections()
	cookie := w.Clearance()

	pages := map[string][]genericPage{}
	for _, ta := range w.Truth() {
		if ta.Access != "full" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ta.URL, nil)
		if err != nil {
			return nil, err
		}
		req.AddCookie(cookie)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ta.URL, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("get %s: %s", ta.URL, resp.Status)
		}
		html, _, err := charset.DecodeHTML(body, resp.Header.Get("Content-Type"))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", ta.URL, err)
		}
		u, err := url.Parse(ta.URL)
		if err != nil {
			return nil, err
		}
		kind := "template"
		if ta.NativePostID != "" { // only gkmlpt articles have CMS ids
			kind = "gkmlpt"
		}
		pages[kind] = append(pages[kind], genericPage{url: u, html: html})
	}
	return pages, nil
}

func BenchmarkGenericExtract(b *testing.B) {
	for _, kind := range []string{"template", "gkmlpt"} {
		b.Run(kind, func(b *testing.B) {
			pages := loadGenericPages(b)[kind]
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
				page, err := extract.Generic(p.html, p.url, nil)
				if err != nil || page.Text == "" {
					b.Fatalf("%s: %v (empty text: %v)", p.url, err, err == nil)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
