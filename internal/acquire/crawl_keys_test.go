package acquire

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCrawlJobKeysAndBudget: a job is its key's only (another key, or a
// console user, is answered 404 for it); each page it asks for is charged
// to its key like a fetch, a page robots.txt refuses nothing; when the
// key's budget runs out the job fails saying so, keeps its pages, and
// asks for nothing more — on both dialects.
func TestCrawlJobKeysAndBudget(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		site := newCrawlSite(t)
		jo, jobs := withJobs(t)
		g := newGuarded(t, st, withCrawlSite(site), jo)
		_ = jobs
		ctx := context.Background()
		const pw = "a long enough passphrase"
		for _, u := range []string{"alice", "carol"} {
			if _, err := g.users.CreateUser(ctx, "test", u, pw, auth.RoleOperator); err != nil {
				t.Fatal(err)
			}
		}
		a, ka, err := g.users.CreateAPIKey(ctx, "test", "alice", "agent", []string{auth.ScopeAcquire}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.b.SetLimits(ctx, "test", ka.ID, budget.Limits{
			PerDay: budget.Cost{Requests: 4, Bytes: 1 << 30}, RequestsPerMinute: 1000}); err != nil {
			t.Fatal(err)
		}
		b, _, err := g.users.CreateAPIKey(ctx, "test", "alice", "other agent", []string{auth.ScopeAcquire}, nil)
		if err != nil {
			t.Fatal(err)
		}
		keyA := []string{"Authorization", "Bearer " + a}
		keyB := []string{"Authorization", "Bearer " + b}

		// Three pages and one robots.txt refusal: three requests.
		id := startJob(t, g.srv.URL, map[string]any{"url": crawlURL("/"), "maxDiscoveryDepth": 1, "sitemap": "skip",
			"excludePaths": []string{"^/go$", "^/moved"}}, keyA...)
		first := waitJob(t, g.srv.URL, id, keyA...)
		if first.Status != "completed" || first.Completed != 3 || first.CreditsUsed != 3 {
			t.Errorf("first job: %s, completed %d, credits %d", first.Status, first.Completed, first.CreditsUsed)
		}
		used, err := g.b.Usage(ctx, ka.ID)
		if err != nil {
			t.Fatal(err)
		}
		if used.Requests.Used != 3 || used.Requests.Reserved != 0 || used.Bytes.Used <= 0 {
			t.Errorf("after 3 pages and a robots.txt refusal the key was charged %+v", used.Requests)
		}

		// Another key, and a console user, see no such job.
		carol := []string{"Cookie", g.session(t, "carol", pw)}
		for _, hdr := range [][]string{keyB, carol} {
			for _, c := range []struct{ method, path string }{
				{http.MethodGet, "/v1/crawl/" + id}, {http.MethodGet, "/v2/crawl/" + id + "/errors"},
				{http.MethodDelete, "/v1/crawl/" + id}} {
				if r := do(t, g.srv.URL, c.method, c.path, nil, hdr...); r.status != http.StatusNotFound || r.Code != CodeNotFound {
					t.Errorf("%s %s by another caller: %d %s", c.method, c.path, r.status, r.raw)
				}
			}
		}

		// One request left: one page, then the job fails on the budget.
		site.mu.Lock()
		site.log = nil
		site.mu.Unlock()
		id2 := startJob(t, g.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 10, "sitemap": "skip"}, keyA...)
		second := waitJob(t, g.srv.URL, id2, keyA...)
		if second.Status != "failed" || second.Code != CodeBudgetExceeded || !strings.Contains(second.Error, "requests") ||
			second.Completed != 1 || len(second.Data) != 1 || second.CreditsUsed != 1 {
			t.Errorf("second job past the budget: %s", second.raw)
		}
		if log := site.pages(); len(log) != 1 {
			t.Errorf("past the budget the site was asked for %v", log)
		}
		if used, _ := g.b.Usage(ctx, ka.ID); used.Requests.Used != 4 || used.Requests.Reserved != 0 {
			t.Errorf("after the second job: %+v", used.Requests)
		}
		// The job is still there for its key, not for the other.
		if r := do(t, g.srv.URL, http.MethodGet, "/v1/crawl/"+id2, nil, keyB...); r.status != http.StatusNotFound {
			t.Errorf("GET by another key: %d", r.status)
		}
	})
}
