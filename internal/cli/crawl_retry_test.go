package cli

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/extract"
	"zhizhi/internal/sim"
)

// TestCrawlPendingRetryIsNotSuccess: after one 503 on an article page, a
// crawl right after (its retry is minutes away) exits 1 and names the
// article with its retry time instead of calling the run a success;
// `health` lists it and exits 1; `crawl --retry-failed` fetches it at once
// and exits 0, and health no longer lists it.
func TestCrawlPendingRetryIsNotSuccess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and crawls the simulated web")
	}
	waitBound(t)
	db := newCrawledDB(t, false)
	const host, code = "www.lianzhou.gov.test", "lianzhou_tzgg"
	var article string
	for _, a := range db.world.Sim.Truth() {
		if a.TargetCode == code {
			article = a.URL // newest first: on the first list page
			break
		}
	}
	u, err := url.Parse(article)
	if err != nil || article == "" {
		t.Fatalf("no %s article in the truth (%v)", code, err)
	}
	norm, err := extract.NormalizeURL(article)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.world.Sim.SetFault(host, sim.Fault{Kind: sim.Fault503, PathPrefix: u.Path, Count: 1}); err != nil {
		t.Fatal(err)
	}
	db.world.Crawl(t, nil, false) // the article answers 503 once
	asked := func() int {
		n := 0
		for _, a := range db.world.Sim.AccessLog(host) {
			if a.Path == u.Path {
				n++
			}
		}
		return n
	}
	pending := func() (int, []string) {
		t.Helper()
		r := runZhizhi(t, db.env, "health", "--json")
		var rep struct {
			Total   int `json:"pending_retries_total"`
			Retries []struct {
				URL string `json:"url"`
			} `json:"pending_retries"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("health --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		var urls []string
		for _, e := range rep.Retries {
			urls = append(urls, e.URL)
		}
		return rep.Total, urls
	}

	db.world.Sim.ResetLog()
	r := runZhizhi(t, db.env, "crawl", "--target", code)
	if r.code != 1 {
		t.Errorf("crawl right after the 503: exit %d, want 1 (an article is missing until its retry)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"1 篇待重试（下次 ", norm, "⏳ 待重试"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("the summary does not say %q:\n%s", s, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, code) || !strings.Contains(r.stderr, "--retry-failed") {
		t.Errorf("stderr does not name the target and --retry-failed:\n%s", r.stderr)
	}
	if n := asked(); n != 0 {
		t.Errorf("the crawl right after asked for the article %d times before its retry time", n)
	}

	h := runZhizhi(t, db.env, "health")
	if h.code != 1 || !strings.Contains(h.stdout, norm) || !strings.Contains(h.stdout, "待重试") {
		t.Errorf("health: exit %d, want 1 with the article listed as waiting for a retry\nstdout:\n%s", h.code, h.stdout)
	}
	if n, urls := pending(); n != 1 || !slices.Contains(urls, norm) {
		t.Errorf("health --json: %d waiting %v, want the one article", n, urls)
	}

	db.world.Sim.ResetLog()
	r = runZhizhi(t, db.env, "crawl", "--target", code, "--retry-failed")
	if r.code != 0 || !strings.Contains(r.stdout, "✓ 成功") {
		t.Errorf("crawl --retry-failed: exit %d, want 0 with the target green\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := asked(); n != 1 {
		t.Errorf("crawl --retry-failed asked for the article %d times, want 1", n)
	}
	if n, urls := pending(); n != 0 {
		t.Errorf("after --retry-failed health still lists %d waiting: %v", n, urls)
	}
}
