package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/metrics"
	zmodel "zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const configDir = "../../demo/config"

// scrape GETs /metrics from h over real HTTP and parses it with the
// Prometheus text parser: the page must be well-formed as a whole.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds the values (counter, gauge, or a histogram's or summary's
// sample count) of family name's series whose labels include want.
func sum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	total := 0.0
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			if label(m, k) != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.Summary != nil:
			total += float64(m.GetSummary().GetSampleCount())
		}
	}
	return total
}

func wantTypes(t *testing.T, fams map[string]*dto.MetricFamily, want map[string]dto.MetricType) {
	t.Helper()
	for name, typ := range want {
		f := fams[name]
		if f == nil {
			t.Errorf("family %s missing from /metrics", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("family %s is a %s, want %s", name, f.GetType(), typ)
		}
	}
}

const (
	gdHost       = "www.gd.gov.test"
	lianzhouHost = "www.lianzhou.gov.test"
	newsHost     = "www.news.test"
)

// TestScrapeAfterCrawl crawls part of the simulated web twice (the second
// time after the sites moved on, so known pages answer 304), with a CAPTCHA
// on one host and, when Chromium is here, the city portal through the
// browser; then it scrapes /metrics and checks it against the sites' own
// access logs and the store.
func TestScrapeAfterCrawl(t *testing.T) {
	browser := crawltest.Chromium(t)
	ctx := context.Background()
	st := storetest.SQLite(t)
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: configDir, Sim: sim.Options{Seed: 1}})
	m := metrics.New(metrics.Options{Store: st})
	rm, err := fetch.ParseResolveMap(w.Sim.ResolveString())
	if err != nil {
		t.Fatal(err)
	}
	w.Client = crawltest.FastClientWith(t, st, w.Bundle, fetch.ClientOptions{Resolve: rm, ObserveRequest: m.ObserveRequest}, browser)

	// The news site answers its list with a CAPTCHA: the host is then
	// stopped until a person clears it.
	if err := w.Sim.SetFault(newsHost, sim.Fault{Kind: sim.FaultCaptcha, PathPrefix: "/news/"}); err != nil {
		t.Fatal(err)
	}
	bySite := map[string][]zmodel.Target{}
	for _, tg := range w.Targets(t, true) {
		s, err := st.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		bySite[s.SiteCode] = append(bySite[s.SiteCode], tg)
	}
	first := append(append(append([]zmodel.Target{}, bySite["gd_ref"]...), bySite["lianzhou"]...), bySite["news"]...)
	hosts := []string{gdHost, lianzhouHost, newsHost}
	if browser {
		first = append(first, bySite["qingyuan"][0])
		hosts = append(hosts, crawltest.CityPortalHost)
	}
	runs := 0
	for _, r := range w.Crawler(nil).Run(ctx, first) {
		m.ObserveCrawl(r)
		runs++
	}
	w.Sim.Advance(72 * time.Hour)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	second := append(append([]zmodel.Target{}, bySite["gd_ref"]...), bySite["lianzhou"]...)
	for _, r := range w.Crawler(later).Run(ctx, second) {
		m.ObserveCrawl(r)
		runs++
	}

	fams := scrape(t, m.Handler())
	// The sites' logs as they stand at the scrape; the checks below fetch
	// pages themselves.
	logs := map[string][]sim.Access{}
	for _, h := range hosts {
		logs[h] = w.Sim.AccessLog(h)
	}

	t.Run("families", func(t *testing.T) {
		wantTypes(t, fams, map[string]dto.MetricType{
			"zhizhi_http_requests_total":           dto.MetricType_COUNTER,
			"zhizhi_http_requests_unsent_total":    dto.MetricType_COUNTER,
			"zhizhi_http_response_bytes_total":     dto.MetricType_COUNTER,
			"zhizhi_http_saved_bytes_total":        dto.MetricType_COUNTER,
			"zhizhi_http_request_duration_seconds": dto.MetricType_HISTOGRAM,
			"zhizhi_crawl_runs_total":              dto.MetricType_COUNTER,
			"zhizhi_crawl_duration_seconds":        dto.MetricType_SUMMARY,
			"zhizhi_hosts":                         dto.MetricType_GAUGE,
			"zhizhi_articles":                      dto.MetricType_GAUGE,
			"zhizhi_scrape_error":                  dto.MetricType_GAUGE,
			"go_goroutines":                        dto.MetricType_GAUGE,
			"process_cpu_seconds_total":            dto.MetricType_COUNTER,
			"go_sql_open_connections":              dto.MetricType_GAUGE,
		})
		for _, src := range []string{"hosts", "articles"} {
			if v := sum(fams, "zhizhi_scrape_error", map[string]string{"source": src}); v != 0 {
				t.Errorf("zhizhi_scrape_error{source=%q} = %v on a healthy database", src, v)
			}
		}
	})

	t.Run("requests match the sites' access logs", func(t *testing.T) {
		for _, h := range hosts {
			log := logs[h]
			if len(log) == 0 {
				t.Fatalf("%s saw no request: the test crawled nothing there", h)
			}
			if got := sum(fams, "zhizhi_http_requests_total", map[string]string{"host": h}); got != float64(len(log)) {
				t.Errorf("%s: zhizhi_http_requests_total sums to %v, the site saw %d requests", h, got, len(log))
			}
			byStatus := map[int]int{}
			for _, a := range log {
				byStatus[a.Status]++
			}
			for code, n := range byStatus {
				got := sum(fams, "zhizhi_http_requests_total", map[string]string{"host": h, "status": strconv.Itoa(code)})
				if got != float64(n) {
					t.Errorf("%s: %v requests counted with status %d, the site answered %d", h, got, code, n)
				}
			}
		}
		if browser {
			if v := sum(fams, "zhizhi_http_requests_total", map[string]string{"host": crawltest.CityPortalHost, "tier": "browser"}); v == 0 {
				t.Error("no request of the city portal counted on the browser tier")
			}
		}
		if v := sum(fams, "zhizhi_http_requests_total", map[string]string{"status": "304"}); v == 0 {
			t.Error("the second crawl counted no 304")
		}
		if v := sum(fams, "zhizhi_http_requests_total", map[string]string{"purpose": zmodel.PurposeRobots}); v == 0 {
			t.Error("no robots.txt request counted")
		}
	})

	t.Run("bytes match the sites", func(t *testing.T) {
		// Direct-tier hosts read every body in full: what zhizhi counts
		// off the wire is what the site wrote. A 304 spares the page's
		// body as zhizhi stored it (decoded): the site serves it again,
		// uncompressed, to a plain client.
		hc := w.Sim.HTTPClient()
		for _, h := range []string{gdHost, lianzhouHost} {
			var wrote, saved int64
			for _, a := range logs[h] {
				wrote += a.Bytes
				if a.Status != http.StatusNotModified {
					continue
				}
				resp, err := hc.Get("http://" + h + a.Path)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s%s: %v %v", h, a.Path, resp.Status, err)
				}
				saved += int64(len(body))
			}
			if got := sum(fams, "zhizhi_http_response_bytes_total", map[string]string{"host": h}); got != float64(wrote) {
				t.Errorf("%s: zhizhi_http_response_bytes_total = %v, the site wrote %d bytes", h, got, wrote)
			}
			if saved == 0 {
				t.Fatalf("%s answered no 304: the test needs one", h)
			}
			if got := sum(fams, "zhizhi_http_saved_bytes_total", map[string]string{"host": h}); got != float64(saved) {
				t.Errorf("%s: zhizhi_http_saved_bytes_total = %v, the 304s spared %d bytes", h, got, saved)
			}
		}
	})

	t.Run("requests never sent", func(t *testing.T) {
		// gd_ref_rsrm is a column the site's robots.txt forbids.
		if v := sum(fams, "zhizhi_http_requests_unsent_total", map[string]string{"host": gdHost, "reason": fetch.ClassRobots}); v == 0 {
			t.Error("the column robots.txt forbids left no unsent request with reason robots")
		}
	})

	t.Run("hosts by state", func(t *testing.T) {
		for _, s := range []string{"backoff", "breaker", "review", "captcha", "robots_unreachable"} {
			if fams["zhizhi_hosts"] == nil || !hasSeries(fams["zhizhi_hosts"], "state", s) {
				t.Errorf("zhizhi_hosts has no series for state %q", s)
			}
		}
		if v := sum(fams, "zhizhi_hosts", map[string]string{"state": "captcha"}); v != 1 {
			t.Errorf("zhizhi_hosts{state=captcha} = %v, want 1 (the news site)", v)
		}
	})

	t.Run("articles by status", func(t *testing.T) {
		sites, err := st.ListSites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		codes := map[int64]string{}
		for _, s := range sites {
			codes[s.ID] = s.SiteCode
		}
		want := map[[2]string]int{}
		for _, a := range crawltest.AllArticles(t, st) {
			want[[2]string{codes[a.SiteID], a.Status}]++
		}
		if len(want) == 0 {
			t.Fatal("the crawl stored no article")
		}
		for k, n := range want {
			if got := sum(fams, "zhizhi_articles", map[string]string{"site": k[0], "status": k[1]}); got != float64(n) {
				t.Errorf("zhizhi_articles{site=%q,status=%q} = %v, the store holds %d", k[0], k[1], got, n)
			}
		}
	})

	t.Run("crawl runs", func(t *testing.T) {
		if got := sum(fams, "zhizhi_crawl_runs_total", nil); got != float64(runs) {
			t.Errorf("zhizhi_crawl_runs_total sums to %v, %d targets were crawled", got, runs)
		}
		// gd_ref_rsrm, crawled twice, is forbidden both times.
		if got := sum(fams, "zhizhi_crawl_runs_total", map[string]string{"outcome": "blocked"}); got != 2 {
			t.Errorf("zhizhi_crawl_runs_total{outcome=blocked} = %v, want 2", got)
		}
		for _, tg := range bySite["lianzhou"] {
			if got := sum(fams, "zhizhi_crawl_duration_seconds", map[string]string{"target": tg.TargetCode}); got != 2 {
				t.Errorf("zhizhi_crawl_duration_seconds{target=%q} has %v samples, want 2", tg.TargetCode, got)
			}
		}
	})

	t.Run("no label is a URL", func(t *testing.T) {
		noURLLabels(t, fams)
	})
}

func hasSeries(f *dto.MetricFamily, name, value string) bool {
	for _, m := range f.GetMetric() {
		if label(m, name) == value {
			return true
		}
	}
	return false
}

// noURLLabels fails on any label value that is or holds a URL or a path:
// a URL in a label makes a series per page, without bound.
func noURLLabels(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	n := 0
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				n++
				v := l.GetValue()
				if strings.Contains(v, "://") || strings.ContainsAny(v, "/?#") {
					t.Errorf("%s{%s=%q}: a label value looks like a URL", name, l.GetName(), v)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no label at all: nothing was checked")
	}
}

// TestDBGaugesReportScrapeError: with the database closed, /metrics still
// answers 200 with a well-formed page; the database gauges are left out
// and zhizhi_scrape_error says so, on both dialects.
func TestDBGaugesReportScrapeError(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		m := metrics.New(metrics.Options{Store: st})
		fams := scrape(t, m.Handler())
		for _, src := range []string{"hosts", "articles"} {
			if !hasSeries(fams["zhizhi_scrape_error"], "source", src) {
				t.Fatalf("zhizhi_scrape_error has no series for %s", src)
			}
			if v := sum(fams, "zhizhi_scrape_error", map[string]string{"source": src}); v != 0 {
				t.Errorf("open database: zhizhi_scrape_error{source=%q} = %v, want 0", src, v)
			}
		}
		if fams["zhizhi_hosts"] == nil {
			t.Error("open database: zhizhi_hosts missing")
		}

		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		fams = scrape(t, m.Handler())
		for _, src := range []string{"hosts", "articles"} {
			if v := sum(fams, "zhizhi_scrape_error", map[string]string{"source": src}); v != 1 {
				t.Errorf("closed database: zhizhi_scrape_error{source=%q} = %v, want 1", src, v)
			}
		}
		for _, name := range []string{"zhizhi_hosts", "zhizhi_articles"} {
			if fams[name] != nil {
				t.Errorf("closed database: %s is still reported (%v)", name, fams[name].GetMetric())
			}
		}
		if fams["go_goroutines"] == nil {
			t.Error("closed database: the rest of the page (go_goroutines) is gone")
		}
	})
}

// TestScrapeSourceTimeout: a source that hangs, whether or not it heeds
// its context, costs the scrape its timeout and a scrape error, not the
// page.
func TestScrapeSourceTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	m := metrics.New(metrics.Options{
		ScrapeTimeout: 50 * time.Millisecond,
		QueueDepth: func(ctx context.Context) (map[string]int, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		StaleTargets: func(ctx context.Context) (int, error) {
			<-release // ignores its context
			return 0, nil
		},
	})
	done := make(chan map[string]*dto.MetricFamily, 1)
	go func() {
		srv := httptest.NewServer(m.Handler())
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err != nil {
			done <- nil
			return
		}
		defer resp.Body.Close()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, _ := p.TextToMetricFamilies(resp.Body)
		done <- fams
	}()
	var fams map[string]*dto.MetricFamily
	select {
	case fams = <-done:
	case <-time.After(time.Minute): // a guard against a hang, far above any timeout here
		t.Fatal("the scrape waited for a hung source")
	}
	if fams == nil {
		t.Fatal("no page")
	}
	for _, src := range []string{"queue", "stale_targets"} {
		if v := sum(fams, "zhizhi_scrape_error", map[string]string{"source": src}); v != 1 {
			t.Errorf("zhizhi_scrape_error{source=%q} = %v, want 1", src, v)
		}
	}
	if fams["zhizhi_queue_jobs"] != nil || fams["zhizhi_targets_stale"] != nil {
		t.Error("a hung source's gauge is reported")
	}
}

// TestJobQueueAndStaleMetrics: what the serve command feeds in comes out
// under the documented names, types and labels.
func TestJobQueueAndStaleMetrics(t *testing.T) {
	m := metrics.New(metrics.Options{
		QueueDepth: func(context.Context) (map[string]int, error) {
			return map[string]int{"available": 3, "running": 1}, nil
		},
		StaleTargets: func(context.Context) (int, error) { return 2, nil },
	})
	m.ObserveJob("crawl_target", 90*time.Second, 12*time.Second, "completed")
	m.ObserveJob("crawl_target", 30*time.Second, 3*time.Second, "failed")
	m.ObserveJob("recheck_due", 0, time.Second, "completed")
	fams := scrape(t, m.Handler())
	wantTypes(t, fams, map[string]dto.MetricType{
		"zhizhi_jobs_total":             dto.MetricType_COUNTER,
		"zhizhi_job_queue_wait_seconds": dto.MetricType_HISTOGRAM,
		"zhizhi_job_duration_seconds":   dto.MetricType_HISTOGRAM,
		"zhizhi_queue_jobs":             dto.MetricType_GAUGE,
		"zhizhi_targets_stale":          dto.MetricType_GAUGE,
	})
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"zhizhi_jobs_total", map[string]string{"kind": "crawl_target", "outcome": "completed"}, 1},
		{"zhizhi_jobs_total", map[string]string{"kind": "crawl_target", "outcome": "failed"}, 1},
		{"zhizhi_jobs_total", map[string]string{"kind": "recheck_due"}, 1},
		{"zhizhi_job_queue_wait_seconds", map[string]string{"kind": "crawl_target"}, 2},
		{"zhizhi_job_duration_seconds", map[string]string{"kind": "recheck_due"}, 1},
		{"zhizhi_queue_jobs", map[string]string{"state": "available"}, 3},
		{"zhizhi_queue_jobs", map[string]string{"state": "running"}, 1},
		{"zhizhi_targets_stale", nil, 2},
	}
	for _, c := range checks {
		if got := sum(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Seconds, not milliseconds: 90 s and 30 s waited.
	for _, mm := range fams["zhizhi_job_queue_wait_seconds"].GetMetric() {
		if label(mm, "kind") == "crawl_target" {
			if s := mm.GetHistogram().GetSampleSum(); s != 120 {
				t.Errorf("crawl_target queue wait sums to %v s, want 120", s)
			}
		}
	}
}

// TestLabelsStayBounded: odd status codes fold into their class, and
// beyond 1000 hosts the rest share host="other".
func TestLabelsStayBounded(t *testing.T) {
	m := metrics.New(metrics.Options{})
	for i := range 1005 {
		m.ObserveRequest(fetch.RequestEvent{Host: "h" + strconv.Itoa(i) + ".gov.test", Purpose: zmodel.PurposeDetail,
			Tier: fetch.TierDirect, Sent: true, Status: http.StatusOK})
	}
	for _, e := range []fetch.RequestEvent{
		{Host: "a.gov.test", Purpose: "whatever the caller says", Tier: fetch.TierDirect, Sent: true, Status: 299},
		{Host: "a.gov.test", Purpose: zmodel.PurposeList, Tier: fetch.TierBrowser, Sent: true, Status: 999},
		{Host: "a.gov.test", Purpose: zmodel.PurposeList, Tier: fetch.TierDirect, Sent: true, ErrorClass: fetch.ClassTimeout},
	} {
		m.ObserveRequest(e)
	}
	fams := scrape(t, m.Handler())
	hosts := map[string]bool{}
	for _, mm := range fams["zhizhi_http_requests_total"].GetMetric() {
		hosts[label(mm, "host")] = true
	}
	if len(hosts) > 1000+1 {
		t.Errorf("%d host label values, want at most 1000 and other", len(hosts))
	}
	if got := sum(fams, "zhizhi_http_requests_total", map[string]string{"host": "other"}); got < 5 {
		t.Errorf("host=other counts %v requests, want the ones past the first 1000 hosts", got)
	}
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"status": "2xx", "purpose": "other"}, 1},
		{map[string]string{"status": "other", "tier": "browser"}, 1},
		{map[string]string{"status": fetch.ClassTimeout}, 1},
	} {
		if got := sum(fams, "zhizhi_http_requests_total", c.labels); got != c.want {
			t.Errorf("zhizhi_http_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
}
