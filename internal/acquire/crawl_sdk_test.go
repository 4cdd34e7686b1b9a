package acquire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/acquire/firecrawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/npmtest"
	"zhizhi/internal/store/storetest"
)

// sdkCrawlScript runs crawl jobs as a Firecrawl user does: crawl() waits
// for the job and pages through next; startCrawl + getCrawlStatus polls
// it; getCrawlErrors lists its errors and robots.txt blocks.
const sdkCrawlScript = `
const { default: Firecrawl } = await import(process.env.SDK_URL);
const app = new Firecrawl({ apiKey: "fc-zhizhi-test", apiUrl: process.env.API_URL });
const out = {};
const done = await app.crawl(process.env.START_URL, { limit: 5, sitemap: "skip", pollInterval: 1,
  scrapeOptions: { formats: ["markdown"] } });
out.crawl = { status: done.status, completed: done.completed, total: done.total, creditsUsed: done.creditsUsed,
  urls: done.data.map((d) => d.metadata.sourceURL), markdown: done.data[0].markdown };
const started = await app.startCrawl(process.env.ROOT_URL, { limit: 4, maxDiscoveryDepth: 1, sitemap: "skip" });
let st;
for (;;) {
  st = await app.getCrawlStatus(started.id);
  if (st.status !== "scraping") break;
  await new Promise((r) => setTimeout(r, 200));
}
out.polled = { id: started.id, url: started.url, status: st.status, completed: st.completed,
  urls: st.data.map((d) => d.metadata.sourceURL) };
out.errors = await app.getCrawlErrors(started.id);
console.log(JSON.stringify(out));
`

// TestFirecrawlSDKCrawl: the real Firecrawl JavaScript SDK runs a crawl
// job to its end and pages through its results (next), and starts and
// polls another, reading its robots.txt blocks.
func TestFirecrawlSDKCrawl(t *testing.T) {
	sdk := firecrawltest.SDK(t)
	e := newCrawlEnv(t, storetest.SQLite(t), func(_ *fetch.ClientOptions, d *Deps) { d.CrawlPageSize = 2 })
	script := filepath.Join(t.TempDir(), "crawl.mjs")
	if err := os.WriteFile(script, []byte(sdkCrawlScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out := npmtest.Node(t, npmtest.Script{Path: script, Env: []string{"SDK_URL=" + sdk, "API_URL=" + e.srv.URL, "START_URL=" + crawlURL("/news/0.html"),
		"ROOT_URL=" + crawlURL("/")}})
	var got struct {
		Crawl struct {
			Status                        string
			Completed, Total, CreditsUsed int
			URLs                          []string
			Markdown                      string
		}
		Polled struct {
			ID, URL, Status string
			Completed       int
			URLs            []string
		}
		Errors struct {
			Errors        []crawlError
			RobotsBlocked []string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the script's output is not JSON: %v\n%s", err, out)
	}
	c := got.Crawl
	if c.Status != "completed" || c.Completed != 5 || c.Total != 5 || len(c.URLs) != 5 || len(twice(c.URLs)) > 0 ||
		c.URLs[0] != crawlURL("/news/0.html") || !strings.Contains(c.Markdown, "测试采集任务") {
		t.Errorf("crawl() through the SDK (pages of 2, followed through next): %+v", c)
	}
	p := got.Polled
	if p.Status != "completed" || p.Completed != 3 || len(p.URLs) != 3 || p.URL != e.srv.URL+"/v2/crawl/"+p.ID ||
		!slices.Contains(p.URLs, crawlURL("/news/0.html")) {
		t.Errorf("startCrawl + getCrawlStatus through the SDK: %+v", p)
	}
	if !slices.Equal(got.Errors.RobotsBlocked, []string{crawlURL("/private/0.html")}) {
		t.Errorf("getCrawlErrors through the SDK: %+v", got.Errors)
	}
}
