package acquire

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// heldJobs records the jobs started and runs none: the test runs them.
type heldJobs struct {
	mu  sync.Mutex
	ids []string
}

func (h *heldJobs) StartCrawlJob(_ context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = append(h.ids, id)
	return nil
}

// TestCrawlJobResumes: a job's run that stops half-way, then a process
// that dies between recording a page as asked and its answer, then a run
// in another API on another client over the same database: the job ends
// with exactly its limit of pages answered, each asked once, the one lost
// in the crash listed, never asked again and not counted against the
// limit (another page is asked in its place) — on both dialects.
func TestCrawlJobResumes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		held := &heldJobs{}
		hold := func(_ *fetch.ClientOptions, d *Deps) { d.Jobs = held }
		site := newCrawlSite(t)
		e1 := newEnv(t, st, withCrawlSite(site), hold)
		id := startJob(t, e1.srv.URL, map[string]any{"url": crawlURL("/news/0.html"), "limit": 9, "sitemap": "skip"})

		// The first run yields after three pages.
		stop := make(chan struct{})
		go func() {
			for len(site.pages()) < 3 {
				time.Sleep(time.Millisecond)
			}
			close(stop)
		}()
		finished, err := e1.api.RunCrawlJob(context.Background(), id, stop)
		if err != nil || finished {
			t.Fatalf("first run: finished %v, %v", finished, err)
		}
		afterFirst := len(site.pages())

		// A process takes the job up, records its next page as asked, and
		// dies before the request leaves.
		attempt, _, err := st.BeginCrawlJobAttempt(context.Background(), id, "lost")
		if err != nil || attempt == 0 {
			t.Fatal(attempt, err)
		}
		_, lost, err := st.ClaimCrawlPage(context.Background(), id, attempt)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.MarkCrawlPageSent(context.Background(), id, attempt, lost.URL); err != nil {
			t.Fatal(err)
		}

		// Another API, on another client, finishes the job.
		e2 := newEnv(t, st, withCrawlSite(site), hold)
		finished, err = e2.api.RunCrawlJob(context.Background(), id, nil)
		if err != nil || !finished {
			t.Fatalf("second run: finished %v, %v", finished, err)
		}
		a := waitJob(t, e2.srv.URL, id)
		log := site.pages()
		if a.Status != "completed" || a.Total != 9 || a.Completed != 9 || len(a.Data) != 9 {
			t.Errorf("job: %s, total %d, completed %d, %d pages", a.Status, a.Total, a.Completed, len(a.Data))
		}
		if len(log) != 9 || afterFirst < 3 || len(twice(log)) > 0 {
			t.Errorf("the site was asked for %d pages (%d in the first run): %v", len(log), afterFirst, log)
		}
		lostPath := strings.TrimPrefix(lost.URL, "http://"+crawlHost)
		for _, p := range log {
			if p == crawlHost+" "+lostPath {
				t.Errorf("the page lost in the crash, %s, was asked for again", lost.URL)
			}
		}
		errs := do(t, e2.srv.URL, http.MethodGet, "/v1/crawl/"+id+"/errors", nil)
		if len(errs.Errors) != 1 || errs.Errors[0].URL != lost.URL || errs.Errors[0].Code != CodeInterrupted {
			t.Errorf("errors: %s", errs.raw)
		}
	})
}
