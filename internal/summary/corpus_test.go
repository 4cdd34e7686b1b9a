package summary

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"zhizhi/internal/extract"
	"zhizhi/internal/sim"
)

// TestSimulatedCorpus builds a card for every article of three simulated
// webs, checks the extractive rules on each and reports σ, relevance and the
// share of each grade per site. The shares are measured, not asserted.
func TestSimulatedCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three simulated webs")
	}
	type tally struct {
		sigmas             []float64
		relevant, anchors  int
		green, yellow, red int
		access             string
	}
	bySite := map[string]*tally{}
	all := &tally{}
	heads, shortHeads := 0, 0
	var dump *os.File
	if p := os.Getenv("SUMMARY_DUMP"); p != "" {
		dump, _ = os.Create(p)
		defer dump.Close()
	}
	for _, seed := range []int64{1, 2, 3} {
		w, err := sim.Start(context.Background(), sim.Options{Seed: seed})
		if err != nil {
			t.Fatalf("start simulated web: %v", err)
		}
		client := w.HTTPClient()
		for _, a := range w.Truth() {
			text := a.BodyText
			if a.Access == "summary" {
				text = headText(t, client, a.URL)
				heads++
				if len(text) < len(a.BodyText) {
					shortHeads++
				}
			}
			pt := a.PublishTime
			in := Input{Title: a.Title, Text: text, SourceURL: a.URL, PublishTime: &pt, FetchedAt: w.Now()}
			c := Build(in)
			checkExtractive(t, a.URL, text, c.Summary)
			if dump != nil {
				fmt.Fprintf(dump, "=== %s %s σ=%.2f rel=%d %s\n%s\nanchors: %v\n%s\n", a.SiteCode, a.Title, c.Sigma, c.Relevance, c.Grade, a.URL, c.Anchors, c.Summary)
			}
			ts := bySite[a.SiteCode]
			if ts == nil {
				ts = &tally{access: a.Access}
				bySite[a.SiteCode] = ts
			}
			for _, x := range []*tally{ts, all} {
				x.sigmas = append(x.sigmas, c.Sigma)
				x.anchors += len(c.Anchors)
				if c.Relevance <= 20 {
					x.relevant++
				}
				switch c.Grade {
				case Green:
					x.green++
				case Yellow:
					x.yellow++
				case Red:
					x.red++
				}
			}
		}
		w.Close()
	}
	report := func(name string, x *tally) {
		n := len(x.sigmas)
		if x.green+x.yellow+x.red != n {
			t.Errorf("%s: %d green + %d yellow + %d red cards, of %d", name, x.green, x.yellow, x.red, n)
		}
		s := append([]float64(nil), x.sigmas...)
		sort.Float64s(s)
		sum := 0.0
		for _, v := range s {
			sum += v
		}
		med := s[n/2]
		if n%2 == 0 {
			med = (s[n/2-1] + s[n/2]) / 2
		}
		pct := func(k int) float64 { return 100 * float64(k) / float64(n) }
		t.Logf("| %-9s | %-7s | %4d | %4.1f | %.3f | %.3f | %5.1f%% | %5.1f%% | %5.1f%% | %5.1f%% |",
			name, x.access, n, float64(x.anchors)/float64(n), sum/float64(n), med, pct(x.relevant), pct(x.green), pct(x.yellow), pct(x.red))
	}
	t.Logf("| site      | access  | cards | core anchors (mean) | σ mean | σ median | relevance ≤ 20 | 🟢 | 🟡 | 🔴 |")
	var codes []string
	for c := range bySite {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		report(c, bySite[c])
	}
	all.access = "both"
	report("all", all)
	t.Logf("summary-access articles: %d, of which %d had more body than their 64 KiB head", heads, shortHeads)
}

// headText reads what the crawler reads of a summary-access page — its
// first 64 KiB, the default head — and returns the body text found there.
func headText(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("get %s: %v", u, err)
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("read %s: status %d, %v", u, resp.StatusCode, err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(head))
	if err != nil {
		t.Fatalf("parse %s: %v", u, err)
	}
	// The news site's body selector, as its configuration gives it.
	return extract.BodyText(doc.Find("article.article-body"))
}
