package crawl_test

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const newsHost = "www.news.test" // the simulated web's access: summary site

// TestSummarySiteTakesOnlyTheHead crawls the summary-access news site and
// proves from the site's own access log that no attachment or image was
// asked for and that no detail page gave more than the 64 KiB head: where
// the site honours byte ranges (static files) it never sent more; where it
// ignores them (a dynamic page) it sent the whole page, and zhizhi read
// only the head of it before hanging up.
func TestSummarySiteTakesOnlyTheHead(t *testing.T) {
	const head = 64 << 10 // the head a summary-access site allows: 64 KiB
	for _, tc := range []struct {
		name    string
		noRange bool
	}{
		{"site honours Range", false},
		{"site ignores Range", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.SQLite(t)
			w := newWorld(t, st, false)
			if tc.noRange {
				if err := w.sim.SetFault(newsHost, sim.Fault{Kind: sim.FaultNoRange}); err != nil {
					t.Fatal(err)
				}
			}
			site, err := st.SiteByCode(ctx, "news")
			if err != nil {
				t.Fatal(err)
			}
			if site.Access != model.AccessSummary {
				t.Fatalf("the news site's access is %q, want summary", site.Access)
			}
			var targets []model.Target
			for _, tg := range w.w.Targets(t, false) {
				if tg.SiteID == site.ID {
					targets = append(targets, tg)
				}
			}
			for _, r := range w.w.Crawler(nil).Run(ctx, targets) {
				if r.Err != nil || r.Created == 0 {
					t.Fatalf("crawl %s: err %v, created %d", r.TargetCode, r.Err, r.Created)
				}
			}
			access := w.sim.AccessLog(newsHost)

			// What the site holds: its articles, their attachments and
			// images, and how large each page is whole.
			details := map[string]bool{}
			files := map[string]bool{}
			for _, a := range w.sim.Truth() {
				if a.Host != newsHost {
					continue
				}
				u, _ := url.Parse(a.URL)
				details[u.RequestURI()] = true
				for _, f := range a.Attachments {
					fu, _ := url.Parse(f.URL)
					files[fu.Path] = true
				}
			}
			whole := pageSizes(t, w.sim, details)

			big, cut := 0, 0
			for _, acc := range access {
				p, _, _ := strings.Cut(acc.Path, "?")
				switch strings.ToLower(path.Ext(p)) {
				case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".zip", ".rar":
					t.Errorf("a summary-access site was asked for a file: %s %s", acc.Method, acc.Path)
					continue
				}
				if files[p] || strings.HasPrefix(p, "/images/") {
					t.Errorf("a summary-access site was asked for an attachment or image: %s %s", acc.Method, acc.Path)
					continue
				}
				if !details[acc.Path] {
					continue
				}
				if whole[acc.Path] > head {
					big++
				}
				// Measured before compression too: a whole page gzipped
				// may be fewer bytes than the head, yet it is the whole
				// page.
				if acc.Bytes > head || acc.ContentBytes > head {
					cut++
					if !tc.noRange {
						t.Errorf("%s sent %d body bytes carrying %d bytes of the page (status %d) for a %d-byte head",
							acc.Path, acc.Bytes, acc.ContentBytes, acc.Status, head)
					}
				}
			}
			if big == 0 {
				t.Fatalf("no detail page of %s is over %d bytes: the test proves nothing", newsHost, head)
			}

			// What zhizhi read: crawl_log, detail by detail.
			logs, err := st.ListCrawlLogs(ctx, store.CrawlLogFilter{Host: newsHost, Purpose: model.PurposeDetail, Limit: 10000})
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) == 0 {
				t.Fatal("crawl_log has no detail request at the news site")
			}
			read := map[string]int64{}
			for _, l := range logs {
				if l.Bytes > head {
					t.Errorf("crawl_log: %s read %d body bytes, more than the %d-byte head", l.ArticleURL, l.Bytes, head)
				}
				u, _ := url.Parse(l.ArticleURL)
				read[u.RequestURI()] += l.Bytes
			}
			if tc.noRange {
				// The honest picture: the site pushed whole pages into the
				// connection before zhizhi hung up; zhizhi read the head.
				var lines []string
				var sent, got int64
				for _, acc := range access {
					if details[acc.Path] && whole[acc.Path] > head {
						lines = append(lines, fmt.Sprintf("  %-24s page %7d  site wrote %7d  zhizhi read %7d", acc.Path, whole[acc.Path], acc.Bytes, read[acc.Path]))
						sent += acc.Bytes
						got += read[acc.Path]
					}
				}
				sort.Strings(lines)
				t.Logf("pages over the head, Range ignored: %d answers the site wrote past the head; site wrote %d bytes, zhizhi read %d:\n%s",
					cut, sent, got, strings.Join(lines, "\n"))
			}
		})
	}
}

// pageSizes fetches each page whole, uncompressed, past the crawler (the
// site's log is read before), and returns its size by path.
func pageSizes(t *testing.T, w *sim.World, paths map[string]bool) map[string]int {
	t.Helper()
	c := w.HTTPClient()
	out := map[string]int{}
	for p := range paths {
		resp, err := c.Get("http://" + newsHost + p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d, %v", p, resp.StatusCode, err)
		}
		out[p] = len(b)
	}
	return out
}
