package acquire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/acquire/firecrawltest"
	"zhizhi/internal/npmtest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store/storetest"
)

// sdkScript calls the SDK as a Firecrawl user would, with only the base
// URL changed: a scrape to Markdown, then a scrape robots.txt refuses,
// whose error object it reports.
const sdkScript = `
const { default: Firecrawl } = await import(process.env.SDK_URL);
const app = new Firecrawl({ apiKey: "fc-zhizhi-test", apiUrl: process.env.API_URL });
const out = {};
const doc = await app.scrape(process.env.PAGE_URL, { formats: ["markdown", "links"], onlyMainContent: true });
out.markdown = doc.markdown;
out.links = doc.links;
out.metadata = doc.metadata;
out.acquisition = doc.acquisition;
try {
  await app.scrape(process.env.REFUSED_URL, { formats: ["markdown"] });
  out.error = null;
} catch (e) {
  out.error = { name: e.name, message: e.message, status: e.status, code: e.code };
}
console.log(JSON.stringify(out));
`

// TestFirecrawlSDK: the real Firecrawl JavaScript SDK, pointed at zhizhi,
// scrapes a page of the simulated web to Markdown and gets its error object
// for a page robots.txt refuses.
func TestFirecrawlSDK(t *testing.T) {
	sdk := firecrawltest.SDK(t)
	e := newEnv(t, storetest.SQLite(t))
	art := e.truth(t, "www.gov.test")
	var refused sim.TruthArticle
	for _, a := range e.w.Truth() {
		if a.RobotsDisallowed {
			refused = a
			break
		}
	}
	script := filepath.Join(t.TempDir(), "sdk.mjs")
	if err := os.WriteFile(script, []byte(sdkScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out := npmtest.Node(t, npmtest.Script{Path: script, Env: []string{"SDK_URL=" + sdk, "API_URL=" + e.srv.URL, "PAGE_URL=" + art.URL, "REFUSED_URL=" + refused.URL}})
	var got struct {
		Markdown string   `json:"markdown"`
		Links    []string `json:"links"`
		Metadata Metadata `json:"metadata"`
		Error    *struct {
			Name, Message, Code string
			Status              int
		} `json:"error"`
		Acquisition *Acquisition `json:"acquisition"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the script's output is not JSON (its stderr is logged above): %v\n%s", err, out)
	}
	if !strings.HasPrefix(got.Markdown, "# "+art.Title) || !strings.Contains(got.Markdown, "| 序号 |") {
		t.Errorf("markdown through the SDK:\n%.400s", got.Markdown)
	}
	if got.Metadata.Title != art.Title || got.Metadata.StatusCode != 200 || got.Metadata.SourceURL != art.URL || got.Metadata.DocNo != art.DocNo {
		t.Errorf("metadata through the SDK: %+v", got.Metadata)
	}
	if got.Acquisition == nil || !got.Acquisition.Untrusted || got.Acquisition.Raw.SHA256 == "" {
		t.Errorf("the Acquisition Result did not come through: %+v", got.Acquisition)
	}
	if got.Error == nil || got.Error.Status != 403 || got.Error.Code != CodeRobotsDisallowed || !strings.Contains(got.Error.Message, "robots.txt") {
		t.Errorf("the SDK's error object for a robots.txt refusal: %+v", got.Error)
	}
	for _, p := range pathsAt(e.w, refused.Host) {
		if p != "/robots.txt" && strings.HasSuffix(refused.URL, p) {
			t.Errorf("the refused page was requested")
		}
	}
}
