package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/acquire/firecrawltest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// acquireScript scrapes PAGE_URL with Firecrawl's SDK, as its users do
// with only the base URL changed, then OVER_URL, reporting the error
// object of that one.
const acquireScript = `
const { default: Firecrawl } = await import(process.env.SDK_URL);
const app = new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });
const out = {};
const doc = await app.scrape(process.env.PAGE_URL, { formats: ["markdown"] });
out.markdown = doc.markdown;
out.title = doc.metadata && doc.metadata.title;
try {
  await app.scrape(process.env.OVER_URL, { formats: ["markdown"] });
  out.error = null;
} catch (e) {
  out.error = { message: e.message, status: e.status, code: e.code };
}
console.log(JSON.stringify(out));
`

// TestServeAcquisitionAPI: `zhizhi serve` answers the acquisition API with
// the keys `zhizhi apikey create` makes: Firecrawl's own SDK scrapes a page
// of the simulated web to Markdown with an acquire key; no key is 401, a
// read-only key 403; a key made with --requests-per-day 3 gets its fourth
// request of the day refused with 402 naming the requests budget, and GET
// /v1/usage shows the 3 used.
func TestServeAcquisitionAPI(t *testing.T) {
	waitBound(t)
	sdk := firecrawltest.SDK(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st, "gd_ref_wjk") // one small target: this test is about the API
	run := func(stdin string, args ...string) string {
		t.Helper()
		return sw.zhizhi(t, stdin, args...)
	}
	keyIn := func(out string) string {
		t.Helper()
		k := regexp.MustCompile(`zk_[A-Za-z0-9_-]+`).FindString(out)
		if k == "" {
			t.Fatalf("apikey create printed no key:\n%s", out)
		}
		return k
	}
	run("s3cret-pass-1\n", "user", "add", "alice", "--role", "operator", "--password-stdin")
	agent := keyIn(run("", "apikey", "create", "--user", "alice", "--name", "智能体", "--scopes", "acquire", "--requests-per-day", "3"))
	reader := keyIn(run("", "apikey", "create", "--user", "alice", "--name", "rag", "--scope", "read"))

	// Pages of hosts the kept target does not crawl, one per host: no
	// politeness wait between them. The fourth is refused before it is
	// fetched, so its host does not matter.
	var pages []sim.TruthArticle
	for _, host := range []string{"www.gov.test", "www.yingde.gov.test", "www.lianzhou.gov.test", "www.gov.test"} {
		for _, a := range sw.world.Sim.Truth() {
			if a.Host == host && !a.RobotsDisallowed && !a.Abolished && !slices.ContainsFunc(pages, func(p sim.TruthArticle) bool { return p.URL == a.URL }) {
				pages = append(pages, a)
				break
			}
		}
	}
	if len(pages) < 4 {
		t.Fatalf("the simulated web lacks the pages this test needs: %d", len(pages))
	}

	p := sw.startServe(t, sw.dataDir)
	defer p.stop(t)
	base := "http://" + p.addr
	call := func(method, path, key string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode, v
	}
	fetch := func(key, url string) (int, map[string]any) {
		t.Helper()
		return call(http.MethodPost, "/v1/fetch", key, map[string]any{"url": url})
	}

	if st, v := fetch("", pages[0].URL); st != http.StatusUnauthorized || v["code"] != "UNAUTHORIZED" || v["success"] != false {
		t.Errorf("no key: %d %v", st, v)
	}
	if st, v := fetch(reader, pages[0].URL); st != http.StatusForbidden || v["code"] != "INSUFFICIENT_SCOPE" {
		t.Errorf("a read-only key: %d %v", st, v)
	}
	for _, pg := range pages[:2] {
		if st, v := fetch(agent, pg.URL); st != http.StatusOK || v["success"] != true {
			t.Fatalf("fetch %s with the acquire key: %d %v\n%s", pg.URL, st, v, p.output())
		}
	}

	// The third request of the day through the SDK, and the fourth.
	script := filepath.Join(t.TempDir(), "scrape.mjs")
	if err := os.WriteFile(script, []byte(acquireScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", script)
	cmd.Env = append(os.Environ(), "SDK_URL="+sdk, "API_URL="+base, "API_KEY="+agent,
		"PAGE_URL="+pages[2].URL, "OVER_URL="+pages[3].URL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\nserve:\n%s", err, stderr.String(), p.output())
	}
	var got struct {
		Markdown, Title string
		Error           *struct {
			Message, Code string
			Status        int
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the script's output is not JSON: %v\n%s", err, out)
	}
	if got.Title != pages[2].Title || !strings.HasPrefix(got.Markdown, "# "+pages[2].Title) {
		t.Errorf("the SDK's scrape of %s: title %q, markdown:\n%.300s", pages[2].URL, got.Title, got.Markdown)
	}
	if got.Error == nil || got.Error.Status != http.StatusPaymentRequired || got.Error.Code != "BUDGET_EXCEEDED" ||
		!strings.Contains(got.Error.Message, "budget of requests") || !strings.Contains(got.Error.Message, "3 of 3") {
		t.Errorf("the fourth request of the day, through the SDK: %+v", got.Error)
	}
	for _, a := range sw.world.Sim.AccessLog(pages[3].Host) {
		if strings.HasSuffix(pages[3].URL, a.Path) {
			t.Errorf("the page asked over budget was fetched: %s", a.Path)
		}
	}

	st, v := call(http.MethodGet, "/v1/usage", agent, nil)
	data, _ := v["data"].(map[string]any)
	req, _ := data["requests"].(map[string]any)
	if st != http.StatusOK || req["used"] != 3.0 || req["limit"] != 3.0 || req["remaining"] != 0.0 || req["reserved"] != 0.0 {
		t.Errorf("GET /v1/usage: %d %v", st, v)
	}
}
