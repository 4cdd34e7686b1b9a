package crawl_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/store/storetest"
)

// TestEveryReadyArticleHasItsCard: after a crawl of the simulated web every
// ready article has one summary card — a summary-access site's too, built
// from the head that was read — whose summary is the page's own words
// (each sentence found in the true body text) within 300 characters and
// 10% of the body, and whose title and source are the article's.
func TestEveryReadyArticleHasItsCard(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	w.crawl(t, nil, false)
	ctx := context.Background()
	truth := map[string]string{}
	for _, a := range w.sim.Truth() {
		norm, err := extract.NormalizeURL(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		truth[norm] = strings.Join(strings.Fields(a.BodyText), "")
	}
	grades := map[string]map[string]int{}
	summarySite := 0
	for _, a := range crawltest.AllArticles(t, st) {
		if a.Status != model.StatusReady {
			continue
		}
		c, err := st.CardByArticle(ctx, a.ID)
		if err != nil {
			t.Errorf("%s: no card: %v", a.URL, err)
			continue
		}
		site, err := st.SiteByID(ctx, a.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		if grades[site.Access] == nil {
			grades[site.Access] = map[string]int{}
		}
		grades[site.Access][c.Grade]++
		if site.Access == model.AccessSummary {
			summarySite++
			if a.ContentText != "" {
				t.Errorf("%s: summary-access article keeps body text", a.URL)
			}
		}
		if c.Title != a.Title || c.SourceURL != a.URL || c.SourceDNA == "" || c.Simhash == 0 {
			t.Errorf("%s: card %q %q dna %q simhash %x", a.URL, c.Title, c.SourceURL, c.SourceDNA, c.Simhash)
		}
		body, ok := truth[a.URL]
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(c.Summary); n > 300 || n > utf8.RuneCountInString(body)/10 {
			t.Errorf("%s: summary of %d characters for a body of %d (not counting white space): over min(300, 10%%)", a.URL, n, utf8.RuneCountInString(body))
		}
		for _, s := range strings.FieldsFunc(c.Summary, func(r rune) bool { return strings.ContainsRune("。！？；\n", r) }) {
			s = strings.Join(strings.Fields(strings.TrimSuffix(s, "…")), "")
			if s != "" && !strings.Contains(body, s) {
				t.Errorf("%s: summary sentence %q is not in the page", a.URL, s)
			}
		}
	}
	if summarySite == 0 {
		t.Error("no summary-access article stored: the test covers nothing of that policy")
	}
	t.Logf("card grades by access policy: %v", grades)
	var n int
	if err := st.CardFingerprints(ctx, func(int64, uint64) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("%d cards fingerprinted, %v", n, err)
	}
}
