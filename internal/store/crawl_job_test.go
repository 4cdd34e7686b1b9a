package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestCrawlJobFrontierCapped: a job that finds more links than
// MaxCrawlFrontier keeps that many URLs and no more, on both dialects.
func TestCrawlJobFrontierCapped(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Now()
		j := &store.CrawlJob{ID: "00000000-0000-0000-0000-000000000001", Owner: "user:1", URL: "http://www.gd.gov.test/",
			Options: "{}", Limit: 10, Created: now, Expires: now.Add(24 * time.Hour)}
		if err := st.CreateCrawlJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		attempt, _, err := st.BeginCrawlJobAttempt(ctx, j.ID, "lost")
		if err != nil {
			t.Fatal(err)
		}
		var links []store.CrawlLink
		for i := range store.MaxCrawlFrontier + 50 {
			links = append(links, store.CrawlLink{URL: fmt.Sprintf("http://www.gd.gov.test/p/%d.html", i), Depth: 1})
		}
		if err := st.MarkCrawlJobStarted(ctx, j.ID, attempt, links, 0); err != nil {
			t.Fatal(err)
		}
		_, pg, err := st.ClaimCrawlPage(ctx, j.ID, attempt)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishCrawlPage(ctx, j.ID, attempt, pg.URL, store.CrawlPageOutcome{State: store.PageRefused,
			Links: []store.CrawlLink{{URL: "http://www.gd.gov.test/more.html", Depth: 1}}}); err != nil {
			t.Fatal(err)
		}
		got, err := st.CrawlJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The start URL, refused, and the first MaxCrawlFrontier-1 links.
		if got.Queued != store.MaxCrawlFrontier-1 {
			t.Errorf("%d URLs waiting; want %d", got.Queued, store.MaxCrawlFrontier-1)
		}
	})
}

// TestDeleteExpiredCrawlJobs: the jobs that ended and expired go with
// their pages; a job not yet expired, and one still scraping however
// old, stay.
func TestDeleteExpiredCrawlJobs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Now()
		mk := func(n int, expires time.Time, end bool) string {
			id := fmt.Sprintf("00000000-0000-0000-0000-%012d", n)
			j := &store.CrawlJob{ID: id, Owner: "user:1", URL: "http://www.gd.gov.test/", Options: "{}", Limit: 10,
				Created: expires.Add(-24 * time.Hour), Expires: expires}
			if err := st.CreateCrawlJob(ctx, j); err != nil {
				t.Fatal(err)
			}
			if end {
				if _, err := st.CancelCrawlJob(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			return id
		}
		old := mk(1, now.Add(-time.Hour), true)
		fresh := mk(2, now.Add(time.Hour), true)
		running := mk(3, now.Add(-time.Hour), false)
		n, err := st.DeleteExpiredCrawlJobs(ctx, now)
		if err != nil || n != 1 {
			t.Fatalf("deleted %d, %v; want 1", n, err)
		}
		if _, err := st.CrawlJob(ctx, old); err == nil {
			t.Error("the expired job is still there")
		}
		if docs, err := st.CrawlJobProblems(ctx, old); err != nil || len(docs) != 0 {
			t.Errorf("pages of the expired job: %v, %v", docs, err)
		}
		for _, id := range []string{fresh, running} {
			if _, err := st.CrawlJob(ctx, id); err != nil {
				t.Errorf("job %s: %v", id, err)
			}
		}
	})
}

// TestCrawlJobLimitUnderRace: workers racing on one job — the current
// attempt's and a stale one's, many at once — never get more pages sent
// than the job's limit, and a page lost in a kill frees its slot for one
// more, on both dialects.
func TestCrawlJobLimitUnderRace(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Now()
		const limit = 3
		j := &store.CrawlJob{ID: "00000000-0000-0000-0000-000000000009", Owner: "user:1", URL: "http://www.gd.gov.test/",
			Options: "{}", Limit: limit, Created: now, Expires: now.Add(24 * time.Hour)}
		if err := st.CreateCrawlJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		stale, _, err := st.BeginCrawlJobAttempt(ctx, j.ID, "lost")
		if err != nil {
			t.Fatal(err)
		}
		var links []store.CrawlLink
		for i := range 20 {
			links = append(links, store.CrawlLink{URL: fmt.Sprintf("http://www.gd.gov.test/p/%d.html", i), Depth: 1})
		}
		if err := st.MarkCrawlJobStarted(ctx, j.ID, stale, links, 0); err != nil {
			t.Fatal(err)
		}
		cur, _, err := st.BeginCrawlJobAttempt(ctx, j.ID, "lost")
		if err != nil {
			t.Fatal(err)
		}
		race := func() int {
			sent := make(chan string, 40)
			done := make(chan struct{})
			for w := range 8 {
				go func() {
					defer func() { done <- struct{}{} }()
					attempt := cur
					if w%2 == 1 {
						attempt = stale
					}
					for range 5 {
						_, pg, err := st.ClaimCrawlPage(ctx, j.ID, attempt)
						if err != nil {
							continue
						}
						if st.MarkCrawlPageSent(ctx, j.ID, attempt, pg.URL) == nil {
							sent <- pg.URL
						}
					}
				}()
			}
			for range 8 {
				<-done
			}
			close(sent)
			n := 0
			for range sent {
				n++
			}
			return n
		}
		if n := race(); n != limit {
			t.Fatalf("%d pages sent under a limit of %d", n, limit)
		}
		// A kill: the next attempt finds the three sent and unanswered,
		// frees their slots, and may send three more — no more.
		cur, lost, err := st.BeginCrawlJobAttempt(ctx, j.ID, "lost")
		if err != nil || lost != limit {
			t.Fatalf("lost %d, %v", lost, err)
		}
		if n := race(); n != limit {
			t.Errorf("%d pages sent after the kill under a limit of %d", n, limit)
		}
	})
}
