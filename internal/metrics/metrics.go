// Package metrics owns zhizhi's Prometheus metrics: a registry of its own
// (never the global default) with the polite client's requests, bytes and
// durations, crawl runs, River job latency, and gauges read at scrape time
// from the database (hosts by state, articles by status) and from funcs the
// serve command supplies (queue depth, stale targets). Every label comes
// from a bounded set: host names (capped), purposes, tiers, status codes or
// classes, target and site codes, job kinds; never a URL. A database that
// fails or hangs at scrape time sets zhizhi_scrape_error for its source
// instead of breaking the page.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// DefaultScrapeTimeout bounds each scrape-time source (one database query
// set, one supplied func), well inside Prometheus's own 10 s default.
const DefaultScrapeTimeout = 5 * time.Second

// MaxHosts is how many distinct hosts get their own label value; requests
// to any further host are counted under host="other". The configured sites
// are far fewer; the cap only guards against a page that links or
// redirects to an unbounded number of hosts.
const MaxHosts = 1000

// Options configure New. Every field is optional: a nil source exports
// nothing (and no scrape error).
type Options struct {
	// Store backs the gauges read at scrape time: hosts by state, articles
	// by status, and the database pool's own statistics.
	Store *store.Store
	// QueueDepth returns the number of jobs in each queue state (River's
	// available, scheduled, running, retryable, …).
	QueueDepth func(ctx context.Context) (map[string]int, error)
	// StaleTargets returns how many enabled targets have gone quiet for
	// longer than their expected cadence allows.
	StaleTargets func(ctx context.Context) (int, error)
	// ScrapeTimeout bounds each source at scrape time; zero means
	// DefaultScrapeTimeout.
	ScrapeTimeout time.Duration
	// Now is the time host states are judged at; nil means time.Now.
	Now func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Metrics is zhizhi's registry and the instruments fed while it runs. It
// is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	requests    *prometheus.CounterVec
	unsent      *prometheus.CounterVec
	respBytes   *prometheus.CounterVec
	savedBytes  *prometheus.CounterVec
	reqDuration *prometheus.HistogramVec

	crawlRuns     *prometheus.CounterVec
	crawlDuration *prometheus.SummaryVec

	jobs      *prometheus.CounterVec
	jobWait   *prometheus.HistogramVec
	jobRun    *prometheus.HistogramVec
	hostNames hostSet
}

// New returns a registry with zhizhi's metrics, the Go runtime and process
// collectors and, with a store, the scrape-time database gauges.
func New(opts Options) *Metrics {
	if opts.ScrapeTimeout <= 0 {
		opts.ScrapeTimeout = DefaultScrapeTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		log:       opts.Logger,
		hostNames: hostSet{max: MaxHosts, seen: map[string]bool{}},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_http_requests_total",
			Help: "Requests sent to sites, by host, purpose, tier (direct or browser) and status (the HTTP code, or the error class when no answer came).",
		}, []string{"host", "purpose", "tier", "status"}),
		unsent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_http_requests_unsent_total",
			Help: "Requests never sent: refused by zhizhi's own rules (robots.txt, breaker, backoff, CAPTCHA block, address guard, browser gate) or answered from the browser's cache, by host, purpose and reason.",
		}, []string{"host", "purpose", "reason"}),
		respBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_http_response_bytes_total",
			Help: "Bytes received from sites on the wire, by host, purpose and tier.",
		}, []string{"host", "purpose", "tier"}),
		savedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_http_saved_bytes_total",
			Help: "Body bytes a 304 answer to a conditional request spared, by host and purpose.",
		}, []string{"host", "purpose"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zhizhi_http_request_duration_seconds",
			Help:    "Time on the wire of sent requests, by purpose and tier.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"purpose", "tier"}),
		crawlRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_crawl_runs_total",
			Help: "Crawls of one target, by outcome: ok, partial (some articles failed), blocked (robots.txt forbids the column), failed, interrupted.",
		}, []string{"outcome"}),
		// A summary without quantiles: a count and a sum per target, two
		// series each, where a histogram would cost a dozen per target.
		crawlDuration: prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Name: "zhizhi_crawl_duration_seconds",
			Help: "Duration of each crawl of a target, by target code.",
		}, []string{"target"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zhizhi_jobs_total",
			Help: "Jobs worked, by kind and outcome.",
		}, []string{"kind", "outcome"}),
		jobWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zhizhi_job_queue_wait_seconds",
			Help:    "Time a job waited between becoming available and starting, by kind.",
			Buckets: []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}, []string{"kind"}),
		jobRun: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zhizhi_job_duration_seconds",
			Help:    "Time a job ran, by kind.",
			Buckets: []float64{1, 10, 30, 60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600},
		}, []string{"kind"}),
	}
	m.reg.MustRegister(
		m.requests, m.unsent, m.respBytes, m.savedBytes, m.reqDuration,
		m.crawlRuns, m.crawlDuration, m.jobs, m.jobWait, m.jobRun,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	sc := &scrapeCollector{timeout: opts.ScrapeTimeout, log: opts.Logger}
	if opts.Store != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(opts.Store.DB(), "zhizhi"))
		sc.add(hostsSource(opts.Store, opts.Now))
		sc.add(articlesSource(opts.Store))
	}
	if opts.QueueDepth != nil {
		sc.add(queueSource(opts.QueueDepth))
	}
	if opts.StaleTargets != nil {
		sc.add(staleSource(opts.StaleTargets))
	}
	m.reg.MustRegister(sc)
	return m
}

// Registry is the registry behind Handler, for a caller that adds its own
// collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format (for
// GET /metrics). A collector that fails still leaves the rest served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{m.log},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// ObserveRequest counts one request of the polite client: pass it as
// fetch.ClientOptions.ObserveRequest.
func (m *Metrics) ObserveRequest(e fetch.RequestEvent) {
	host, purpose := m.hostNames.label(e.Host), purposeLabel(e.Purpose)
	if !e.Sent {
		reason := e.ErrorClass
		if reason == "" {
			reason = "cache"
		}
		m.unsent.WithLabelValues(host, purpose, reason).Inc()
		return
	}
	tier := tierLabel(e.Tier)
	m.requests.WithLabelValues(host, purpose, tier, statusLabel(e.Status, e.ErrorClass)).Inc()
	if e.WireBytes > 0 {
		m.respBytes.WithLabelValues(host, purpose, tier).Add(float64(e.WireBytes))
	}
	if e.SavedBytes > 0 {
		m.savedBytes.WithLabelValues(host, purpose).Add(float64(e.SavedBytes))
	}
	m.reqDuration.WithLabelValues(purpose, tier).Observe(e.Duration.Seconds())
}

// ObserveCrawl records one target's crawl: its outcome and, when it ran,
// its duration.
func (m *Metrics) ObserveCrawl(r crawl.Result) {
	m.crawlRuns.WithLabelValues(CrawlOutcome(r)).Inc()
	if !r.Started.IsZero() && r.Finished.After(r.Started) {
		m.crawlDuration.WithLabelValues(r.TargetCode).Observe(r.Finished.Sub(r.Started).Seconds())
	}
}

// CrawlOutcome names how a target's crawl ended, as zhizhi_crawl_runs_total
// counts it.
func CrawlOutcome(r crawl.Result) string {
	switch {
	case r.Interrupted:
		return "interrupted"
	case r.Err != nil:
		return "failed"
	case r.Blocked != "":
		return "blocked"
	case r.Failed > 0 || len(r.Problems) > 0:
		return "partial"
	}
	return "ok"
}

// JobOutcome names how a worked crawl or re-check job ended, as
// zhizhi_jobs_total counts it (ObserveJob's outcome).
func JobOutcome(r crawl.Result) string {
	switch {
	case r.Interrupted:
		return "interrupted"
	case r.Blocked != "":
		return "blocked"
	case r.Err != nil:
		return "failed"
	case r.Failed > 0:
		return "partial"
	}
	return "ok"
}

// ObserveJob records one worked job: how long it waited in the queue, how
// long it ran, and its outcome. kind and outcome must come from fixed sets
// (River's job kinds; completed, failed, cancelled, snoozed, …): each value
// is a series of its own.
func (m *Metrics) ObserveJob(kind string, queueWait, run time.Duration, outcome string) {
	m.jobs.WithLabelValues(kind, outcome).Inc()
	if queueWait >= 0 {
		m.jobWait.WithLabelValues(kind).Observe(queueWait.Seconds())
	}
	if run >= 0 {
		m.jobRun.WithLabelValues(kind).Observe(run.Seconds())
	}
}

// slogPrinter lets promhttp report encoding errors through slog.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Error("metrics", "error", fmt.Sprint(v...)) }

// hostSet hands out host label values: each host its own until max hosts
// have been seen, "other" after that.
type hostSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

func (s *hostSet) label(host string) string {
	if host == "" {
		return "unknown"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[host] {
		return host
	}
	if len(s.seen) >= s.max {
		return "other"
	}
	s.seen[host] = true
	return host
}
