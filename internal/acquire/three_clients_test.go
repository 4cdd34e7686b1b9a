package acquire

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/fetch"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestThreeClientsOneHostPolite: one client fetches pages of a city
// portal, another renders them in Chromium, and a crawl job reads the
// same portal, all at once through one server. The site's own access
// log shows one request in flight at a time and never more than the
// host's bucket allows, and every row crawl_log keeps for the host is
// either a request the site really received or a request refused before
// it was sent (robots.txt, the browser gate).
func TestThreeClientsOneHostPolite(t *testing.T) {
	needChromium(t)
	jo, jobs := withJobs(t)
	st := storetest.SQLite(t)
	e := newEnv(t, st, withBrowser(nil, nil), jo)
	jobs.api = e.api
	const host, limit = "www.gd.gov.test", 6
	var urls []string
	for _, a := range e.w.Truth() {
		if a.Host == host && !a.RobotsDisallowed && len(urls) < 6 {
			urls = append(urls, a.URL)
		}
	}
	if len(urls) < 6 {
		t.Fatalf("the sim has %d pages at %s, want 6", len(urls), host)
	}

	id := startJob(t, e.srv.URL, map[string]any{"url": "http://" + host + "/", "limit": limit,
		"crawlEntireDomain": true, "sitemap": "skip"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	fetched, rendered := 0, 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		for _, u := range urls {
			if a := e.post(t, "/v1/fetch", map[string]any{"url": u}); a.status != http.StatusOK {
				t.Errorf("fetch %s: %d %.300s", u, a.status, a.raw)
				continue
			}
			mu.Lock()
			fetched++
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for _, u := range urls[:3] {
			for {
				a := e.post(t, "/v1/render", map[string]any{"url": u})
				if a.Code == CodeRenderBusy {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if a.status != http.StatusOK {
					t.Errorf("render %s: %d %.300s", u, a.status, a.raw)
				} else {
					mu.Lock()
					rendered++
					mu.Unlock()
				}
				break
			}
		}
	}()
	job := waitJob(t, e.srv.URL, id)
	wg.Wait()
	if job.Status != "completed" || job.Completed != limit || len(job.Data) != limit {
		t.Errorf("crawl job: %s, %d completed, %d pages: %.500s", job.Status, job.Completed, len(job.Data), job.raw)
	}
	if fetched != len(urls) || rendered != 3 {
		t.Errorf("%d of %d pages fetched, %d of 3 rendered", fetched, len(urls), rendered)
	}

	// A render that timed out may have left its page's request still being
	// answered (the browser gave up, the site had not): the site logs it
	// when its answer ends, and only then is the log whole.
	for deadline := time.Now().Add(time.Minute); e.w.InFlight(host) > 0 && time.Now().Before(deadline); { // a safety net, not a measure
		time.Sleep(20 * time.Millisecond)
	}
	log := e.w.AccessLog(host)
	for _, v := range sim.PolitenessViolations(host, log, 0) {
		t.Error(v)
	}
	// Every crawl_log row of the host is a request in the site's log.
	rows, err := st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: host, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	received := map[string]int{}
	for _, a := range log {
		received[a.Path]++
	}
	refused := 0
	for _, r := range rows {
		if c := r.ErrorClass; r.HTTPStatus == nil && (c == fetch.ClassBlocked || c == fetch.ClassRobots || c == fetch.ClassSSRF ||
			c == fetch.ClassBreaker || c == fetch.ClassBackoff) {
			refused++ // never sent: nothing to find in the site's log
			continue
		}
		u, err := url.Parse(r.ArticleURL)
		if err != nil || u.Host != host {
			t.Errorf("crawl_log row for another host or an unreadable URL: %+v", r)
			continue
		}
		if received[u.RequestURI()] == 0 {
			t.Errorf("crawl_log has a row the site never received (or more rows than requests for it): %s %s status %v success %v %s %s", r.Purpose, r.ArticleURL, deref(r.HTTPStatus), r.Success, r.ErrorClass, r.ErrorMsg)
			continue
		}
		received[u.RequestURI()]--
	}
	if len(rows) == 0 || len(rows)-refused > len(log) {
		t.Errorf("%d crawl_log rows for %d requests at the host", len(rows), len(log))
	}
	t.Logf("%d requests at %s, %d crawl_log rows (%d refused before sending)", len(log), host, len(rows), refused)
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
