package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

var scrapeErrorDesc = prometheus.NewDesc("zhizhi_scrape_error",
	"1 when a source could not be read at this scrape (the database failed or was too slow); its gauges are left out of this scrape rather than reported as zero.",
	[]string{"source"}, nil)

// source is one set of gauges read at scrape time. collect builds them all
// before any is sent, so a failure half-way exports none of them.
type source struct {
	name    string
	descs   []*prometheus.Desc
	collect func(ctx context.Context) ([]prometheus.Metric, error)
}

// scrapeCollector reads its sources side by side, each within the timeout,
// so a slow or broken database costs one bounded wait and a scrape error,
// never the page.
type scrapeCollector struct {
	timeout time.Duration
	log     *slog.Logger
	sources []source
}

func (c *scrapeCollector) add(s source) { c.sources = append(c.sources, s) }

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- scrapeErrorDesc
	for _, s := range c.sources {
		for _, d := range s.descs {
			ch <- d
		}
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	var wg sync.WaitGroup
	for _, s := range c.sources {
		wg.Go(func() {
			ms, err := c.read(s)
			failed := 0.0
			if err != nil {
				failed = 1
				c.log.Warn("metrics scrape", "source", s.name, "error", err)
			} else {
				for _, m := range ms {
					ch <- m
				}
			}
			ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed, s.name)
		})
	}
	wg.Wait()
}

// read runs s within the timeout. A source that does not heed its context
// is left to finish on its own: the scrape does not wait for it.
func (c *scrapeCollector) read(s source) ([]prometheus.Metric, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	type result struct {
		ms  []prometheus.Metric
		err error
	}
	done := make(chan result, 1)
	go func() {
		ms, err := s.collect(ctx)
		done <- result{ms, err}
	}()
	select {
	case r := <-done:
		return r.ms, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Host states a host can be stopped in; one host may be in several.
var hostStates = []string{"backoff", "breaker", "review", "captcha", "robots_unreachable"}

func hostsSource(st *store.Store, now func() time.Time) source {
	desc := prometheus.NewDesc("zhizhi_hosts",
		"Hosts in each stopped state: backoff (waiting after errors), breaker (open), review (a person must look), captcha (stopped until a person clears it), robots_unreachable (robots.txt cannot be fetched). A host may be in several states.",
		[]string{"state"}, nil)
	return source{name: "hosts", descs: []*prometheus.Desc{desc}, collect: func(ctx context.Context) ([]prometheus.Metric, error) {
		hosts, err := st.ListHostStates(ctx)
		if err != nil {
			return nil, err
		}
		robots, err := st.ListRobotsStates(ctx)
		if err != nil {
			return nil, err
		}
		t := now()
		n := map[string]int{}
		for _, h := range hosts {
			if h.BackoffUntil != nil && t.Before(*h.BackoffUntil) {
				n["backoff"]++
			}
			if h.BreakerUntil != nil && t.Before(*h.BreakerUntil) {
				n["breaker"]++
			}
			if h.NeedsReview {
				n["review"]++
			}
			if h.BlockReason == fetch.BlockCaptcha {
				n["captcha"]++
			}
		}
		unreachable := map[string]bool{}
		for _, r := range robots {
			if r.Failures > 0 {
				unreachable[r.Host] = true
			}
		}
		n["robots_unreachable"] = len(unreachable)
		out := make([]prometheus.Metric, 0, len(hostStates))
		for _, s := range hostStates {
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n[s]), s))
		}
		return out, nil
	}}
}

func articlesSource(st *store.Store) source {
	desc := prometheus.NewDesc("zhizhi_articles",
		"Stored articles by site code and status: ready, failed (extraction failed; kept for a retry), raw (stored, not yet extracted).",
		[]string{"site", "status"}, nil)
	return source{name: "articles", descs: []*prometheus.Desc{desc}, collect: func(ctx context.Context) ([]prometheus.Metric, error) {
		counts, err := st.ArticleCounts(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]prometheus.Metric, 0, 3*len(counts))
		for site, c := range counts {
			for status, v := range map[string]int{model.StatusReady: c.Ready, model.StatusFailed: c.Failed, model.StatusRaw: c.Raw} {
				out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(v), site, status))
			}
		}
		return out, nil
	}}
}

func queueSource(depth func(ctx context.Context) (map[string]int, error)) source {
	desc := prometheus.NewDesc("zhizhi_queue_jobs",
		"Jobs in the queue by state (available, scheduled, running, retryable, …).",
		[]string{"state"}, nil)
	return source{name: "queue", descs: []*prometheus.Desc{desc}, collect: func(ctx context.Context) ([]prometheus.Metric, error) {
		byState, err := depth(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]prometheus.Metric, 0, len(byState))
		for state, n := range byState {
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), state))
		}
		return out, nil
	}}
}

func staleSource(stale func(ctx context.Context) (int, error)) source {
	desc := prometheus.NewDesc("zhizhi_targets_stale",
		"Enabled targets whose newest article is older than three times their expected cadence.",
		nil, nil)
	return source{name: "stale_targets", descs: []*prometheus.Desc{desc}, collect: func(ctx context.Context) ([]prometheus.Metric, error) {
		n, err := stale(ctx)
		if err != nil {
			return nil, err
		}
		return []prometheus.Metric{prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n))}, nil
	}}
}
