package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store"
)

// TestServeCrawlJobSurvivesKill: a crawl job of the acquisition API, its
// serve process killed with SIGKILL while it works, is taken up by the
// next serve process and ends with exactly its limit of pages, none asked
// for twice — judged from the simulated site's own access log.
func TestServeCrawlJobSurvivesKill(t *testing.T) {
	waitBound(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st) // no target crawls: the job has the host to itself
	sw.zhizhi(t, "s3cret-pass-1\n", "user", "add", "alice", "--role", "operator", "--password-stdin")
	out := sw.zhizhi(t, "", "apikey", "create", "--user", "alice", "--name", "agent", "--scopes", "acquire")
	key := regexp.MustCompile(`zk_[A-Za-z0-9_-]+`).FindString(out)
	if key == "" {
		t.Fatalf("apikey create printed no key:\n%s", out)
	}
	const host, limit = "www.gd.gov.test", 8
	pages := func() []string {
		var out []string
		for _, a := range sw.world.Sim.AccessLog(host) {
			if a.Path != "/robots.txt" && a.Path != "/sitemap.xml" {
				out = append(out, a.Path)
			}
		}
		return out
	}
	call := func(base, method, path string, body any) map[string]any {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var v map[string]any
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return v
	}

	p := sw.startServe(t, sw.dataDir)
	base := "http://" + p.addr
	started := call(base, http.MethodPost, "/v2/crawl", map[string]any{"url": "http://" + host + "/", "limit": limit,
		"crawlEntireDomain": true, "sitemap": "skip"})
	id, _ := started["id"].(string)
	// Killed once some pages are in, between two of them: the host's
	// bucket spaces them two seconds apart.
	deadline := time.Now().Add(2 * time.Minute)
	for len(pages()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the job asked for %d pages in 2 minutes\n%s", len(pages()), p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	p.kill()
	before := len(pages())
	if before >= limit {
		t.Fatalf("the job was done before the kill (%d pages); the test proves nothing", before)
	}

	p2 := sw.startServe(t, sw.dataDir)
	defer p2.stop(t)
	base = "http://" + p2.addr
	var status map[string]any
	for {
		status = call(base, http.MethodGet, "/v1/crawl/"+id, nil)
		if status["status"] != "scraping" {
			break
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("the job is still scraping: %v\n%s", status, p2.output())
		}
		time.Sleep(time.Second)
	}
	var data []any
	for page := status; ; {
		d, _ := page["data"].([]any)
		data = append(data, d...)
		next, _ := page["next"].(string)
		if next == "" {
			break
		}
		page = call(next, http.MethodGet, "", nil)
	}
	log := pages()
	seen := map[string]bool{}
	for _, path := range log {
		if seen[path] {
			t.Errorf("%s was asked for twice", path)
		}
		seen[path] = true
	}
	if status["status"] != "completed" || status["completed"] != float64(limit) || len(data) != limit || len(log) != limit {
		t.Errorf("after the kill (%d pages before it): status %v, completed %v, %d pages in data, %d asked of the site: %v\nerrors: %v\n%s",
			before, status["status"], status["completed"], len(data), len(log), log,
			call(base, http.MethodGet, "/v1/crawl/"+id+"/errors", nil), p2.output())
	}
	if !strings.Contains(p2.output(), "taken back") && !strings.Contains(p2.output(), "接管") {
		t.Logf("serve did not say it took the job back:\n%s", p2.output())
	}
}
