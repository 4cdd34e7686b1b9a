package crawl_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// Two sites lie about their charset: the GB18030 county site's server says
// utf-8, the UTF-8 gkmlpt site's says gbk. Every article is stored with its
// real title and says on itself that the site mislabels its pages.
func TestCrawlSitesThatLieAboutTheirCharset(t *testing.T) {
	lies := map[string]string{
		"www.lianzhou.gov.test": "declared utf-8, body is gb18030",
		"www.yingde.gov.test":   "declared gb18030, body is utf-8",
	}
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorld(t, st, false)
		for host := range lies {
			if err := w.sim.SetFault(host, sim.Fault{Kind: sim.FaultCharsetLie}); err != nil {
				t.Fatal(err)
			}
		}
		var targets []model.Target
		for _, tg := range w.w.Targets(t, false) {
			s, err := st.SiteByID(ctx, tg.SiteID)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := lies[fetch.SiteHost(*s)]; ok {
				targets = append(targets, tg)
			}
		}
		if len(targets) == 0 {
			t.Fatal("no configured target on the lying sites")
		}
		now := func() time.Time { return time.Now() }
		for _, r := range w.w.Crawler(now).Run(ctx, targets) {
			if r.Err != nil {
				t.Errorf("target %s failed: %v", r.TargetCode, r.Err)
			}
		}

		want := map[string]sim.TruthArticle{}
		for _, a := range w.sim.Truth() {
			if _, ok := lies[a.Host]; ok && a.TargetCode != "" && !a.RobotsDisallowed {
				want[a.URL] = a
			}
		}
		got := map[string]model.Article{}
		for _, a := range crawltest.AllArticles(t, st) {
			got[a.URL] = a
		}
		perHost := map[string]int{}
		for u, truth := range want {
			a, ok := got[u]
			if !ok {
				t.Errorf("%s: not stored", u)
				continue
			}
			perHost[truth.Host]++
			if a.Title != truth.Title {
				t.Errorf("%s: title %q, want %q", u, a.Title, truth.Title)
			}
			var meta struct {
				CharsetNote string `json:"charset_note"`
			}
			if err := json.Unmarshal(a.MetadataJSON, &meta); err != nil {
				t.Fatalf("%s: metadata: %v", u, err)
			}
			if meta.CharsetNote != lies[truth.Host] {
				t.Errorf("%s: charset_note %q, want %q", u, meta.CharsetNote, lies[truth.Host])
			}
		}
		for host := range lies {
			if perHost[host] == 0 {
				t.Errorf("no article of %s stored", host)
			}
		}
	})
}
