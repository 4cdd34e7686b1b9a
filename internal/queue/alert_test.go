package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// webhooks is a local webhook receiver: every path is one group's webhook
// taking zhizhi's JSON. It records what it accepted and can fail or hang.
type webhooks struct {
	srv *httptest.Server
	// failFirst: each path answers 500 to its first failFirst requests.
	failFirst int
	// hang, when set, holds every request unanswered until it is closed
	// (or the sender gives up).
	hang chan struct{}

	mu       sync.Mutex
	tries    map[string]int
	open     []bool // by request, in the order they came: not answered yet
	accepted []alert.Notification
}

func newWebhooks(t *testing.T, failFirst int, hang chan struct{}) *webhooks {
	h := &webhooks{failFirst: failFirst, hang: hang, tries: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.tries[r.URL.Path]++
		try := h.tries[r.URL.Path]
		seq := len(h.open)
		h.open = append(h.open, true)
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.open[seq] = false
			h.mu.Unlock()
		}()
		if h.hang != nil {
			select {
			case <-h.hang:
			case <-r.Context().Done():
			}
			return
		}
		if try <= h.failFirst {
			http.Error(w, "upstream down", http.StatusInternalServerError)
			return
		}
		var n alert.Notification
		if err := json.Unmarshal(body, &n); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.accepted = append(h.accepted, n)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// config is an alerts configuration with two groups on this receiver and
// only the review rule on, so that nothing but the hosts a test flags can
// raise an alert.
func (h *webhooks) config() *config.Alerts {
	return &config.Alerts{
		Webhooks: []config.Webhook{
			{Name: "ops-a", Kind: config.WebhookJSON, Format: "json", URL: h.srv.URL + "/a"},
			{Name: "ops-b", Kind: config.WebhookJSON, Format: "json", URL: h.srv.URL + "/b"},
		},
		Review: true,
	}
}

// delivered counts the accepted messages by "webhook key state episode".
func (h *webhooks) delivered() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, n := range h.accepted {
		out[fmt.Sprintf("%s %s %s %d", n.Webhook, n.Key, n.State, n.Episode)]++
	}
	return out
}

// state is the number of requests by path, and which of all requests
// (in the order they came) are still unanswered.
func (h *webhooks) state() (tries map[string]int, open []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tries = map[string]int{}
	for k, v := range h.tries {
		tries[k] = v
	}
	return tries, append([]bool(nil), h.open...)
}

// want is the delivered() of one message per group for each of the given
// "key state episode".
func want(changes ...string) map[string]int {
	out := map[string]int{}
	for _, c := range changes {
		out["ops-a "+c] = 1
		out["ops-b "+c] = 1
	}
	return out
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(out)
	return out
}

// flagHost makes host need a person's review (its breaker tripped a third
// time in 7 days): the review rule's condition.
func flagHost(t *testing.T, st *store.Store, host string) {
	t.Helper()
	now := time.Now().UTC()
	until := now.Add(23 * time.Hour)
	h := &model.HostState{Host: host, ConsecutiveErrors: 5, BreakerUntil: &until, NeedsReview: true,
		BreakerTrips: []time.Time{now.Add(-6 * 24 * time.Hour), now.Add(-3 * 24 * time.Hour), now.Add(-time.Hour)}}
	if err := st.PutHostHealth(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

// alertWorld is the simulated web in st with the queue's tables; no target
// has a schedule, so the queue crawls only what a test asks for.
func alertWorld(t *testing.T, st *store.Store) *crawltest.World {
	t.Helper()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig, Sim: sim.Options{Seed: 1}})
	if err := Migrate(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	onlySchedule(t, st)
	return w
}

func newAlerter(t *testing.T, st *store.Store, cfg *config.Alerts) *alert.Alerter {
	t.Helper()
	a, err := alert.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func startQueue(t *testing.T, opts Options) *Queue {
	t.Helper()
	q, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(30 * time.Second) })
	return q
}

// waitFor polls until ok; the deadline is a safety net, not a measure.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func jobsOfKind(t *testing.T, q *Queue, kind string) []*rivertype.JobRow {
	t.Helper()
	list, err := q.jobs.JobList(context.Background(), river.NewJobListParams().Kinds(kind).First(10000))
	if err != nil {
		t.Fatal(err)
	}
	return list.Jobs
}

func finished(j *rivertype.JobRow) bool {
	return j.FinalizedAt != nil
}

// check runs one alert check as River would and waits until it and every
// delivery job are finished.
func check(t *testing.T, q *Queue) {
	t.Helper()
	r, err := q.jobs.Insert(context.Background(), AlertCheckArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the alert check", func() bool {
		j, err := q.jobs.JobGet(context.Background(), r.Job.ID)
		return err == nil && finished(j)
	})
	settle(t, q)
}

// settle waits until every alert check and delivery job is finished.
func settle(t *testing.T, q *Queue) {
	t.Helper()
	waitFor(t, "the alert jobs to finish", func() bool {
		for _, kind := range []string{KindAlerts, KindNotify} {
			for _, j := range jobsOfKind(t, q, kind) {
				if !finished(j) {
					return false
				}
			}
		}
		return true
	})
}

// A process that dies between claiming an alert and queueing its delivery
// loses nothing: the next check queues it, and sends it once. One that
// dies after queueing but before recording that it did has its message
// queued again by the next check, and still sent once.
func TestAlertClaimedBeforeCrashIsSentOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := alertWorld(t, st)
		hooks := newWebhooks(t, 0, nil)
		cfg := hooks.config()
		q, err := Open(ctx, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Alerter: newAlerter(t, st, cfg), TickEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}

		// The process evaluates, claims the first host's alert, and dies
		// before it queues anything.
		flagHost(t, st, "www.dies-before-queueing.gov.test")
		dead := newAlerter(t, st, cfg)
		if ns, err := dead.Evaluate(ctx, time.Now()); err != nil || len(ns) != 2 {
			t.Fatalf("first evaluation: %d notifications, %v; want one per group (2)", len(ns), err)
		}
		// The next one claims the second host's alert, queues its
		// deliveries and dies before it records that it did.
		flagHost(t, st, "www.dies-after-queueing.gov.test")
		ns, err := dead.Evaluate(ctx, time.Now())
		if err != nil || len(ns) != 2 {
			t.Fatalf("second evaluation: %d notifications, %v; want one per group (2)", len(ns), err)
		}
		for _, n := range ns {
			if _, err := q.jobs.Insert(ctx, NotifyArgs{Notification: n}, nil); err != nil {
				t.Fatal(err)
			}
		}

		// A new process starts; River's leader checks at once, and a
		// second check follows.
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Stop(30 * time.Second) })
		waitFor(t, "the first alert check", func() bool {
			for _, j := range jobsOfKind(t, q, KindAlerts) {
				if j.State == rivertype.JobStateCompleted {
					return true
				}
			}
			return false
		})
		settle(t, q)
		check(t, q)

		wantSent := want("review:www.dies-before-queueing.gov.test firing 1", "review:www.dies-after-queueing.gov.test firing 1")
		if got := hooks.delivered(); !sameCounts(got, wantSent) {
			t.Errorf("delivered %v, want each alert once per group: %v", sortedKeys(got), sortedKeys(wantSent))
		}
		if n := len(jobsOfKind(t, q, KindNotify)); n != 4 {
			t.Errorf("%d delivery jobs, want 4 (2 alerts × 2 groups)", n)
		}
	})
}

// Two serve processes on one PostgreSQL checking at the same moment, with
// an alert a dead process claimed and never queued and a new one both
// claim at once: each alert reaches each group once.
func TestAlertTwoProcessesSendOnce(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := context.Background()
	openStore := func() *store.Store {
		st, err := store.Open(ctx, url, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	st1, st2 := openStore(), openStore()
	w := alertWorld(t, st1)
	rm, err := fetch.ParseResolveMap(w.Sim.ResolveString())
	if err != nil {
		t.Fatal(err)
	}
	client2 := crawltest.FastClient(t, st2, w.Bundle, rm, false)
	hooks := newWebhooks(t, 0, nil)
	cfg := hooks.config()

	flagHost(t, st1, "www.left-behind.gov.test")
	if _, err := newAlerter(t, st1, cfg).Evaluate(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	flagHost(t, st1, "www.new.gov.test")

	var queues []*Queue
	for i, p := range []struct {
		st *store.Store
		f  *fetch.Client
	}{{st1, w.Client}, {st2, client2}} {
		q, err := Open(ctx, Options{Store: p.st, Fetch: p.f, Bundle: w.Bundle, Alerter: newAlerter(t, p.st, cfg),
			TickEvery: time.Hour, ID: fmt.Sprintf("worker-%d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	// Both check at once, before either works a job.
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := (&alertCheckWorker{q: q}).Work(ctx, &river.Job[AlertCheckArgs]{JobRow: &rivertype.JobRow{}}); err != nil {
				t.Errorf("alert check: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, q := range queues {
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Stop(30 * time.Second) })
	}
	settle(t, queues[0])
	check(t, queues[1])

	wantSent := want("review:www.left-behind.gov.test firing 1", "review:www.new.gov.test firing 1")
	if got := hooks.delivered(); !sameCounts(got, wantSent) {
		t.Errorf("delivered %v, want each alert once per group: %v", sortedKeys(got), sortedKeys(wantSent))
	}
}

// Through River end to end: a rule fires and each group gets its message
// once, although its webhook answered 500 twice first (retried, on the
// alerts' own schedule shortened for the test); a second check sends
// nothing more; the recovery comes once when the condition clears.
func TestAlertDeliveredThroughRiver(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := alertWorld(t, st)
		hooks := newWebhooks(t, 2, nil)
		const host = "www.flaky.gov.test"
		flagHost(t, st, host)
		q := startQueue(t, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Alerter: newAlerter(t, st, hooks.config()),
			TickEvery: time.Hour, AlertRetry: 10 * time.Millisecond})
		waitFor(t, "both groups to get the alert", func() bool { return len(hooks.delivered()) == 2 })
		settle(t, q)
		check(t, q)

		fired := want("review:" + host + " firing 1")
		if got := hooks.delivered(); !sameCounts(got, fired) {
			t.Errorf("delivered %v, want the alert once per group: %v", sortedKeys(got), sortedKeys(fired))
		}
		if tries, _ := hooks.state(); tries["/a"] != 3 || tries["/b"] != 3 {
			t.Errorf("webhook requests %v, want 3 each (500, 500, then accepted)", tries)
		}
		// The two refusals prove the message had not arrived: the one
		// accepted is no re-delivery.
		hooks.mu.Lock()
		for _, n := range hooks.accepted {
			if n.Redelivery || strings.Contains(n.Title, "重发") {
				t.Errorf("message to %s marked as a re-delivery after refusals only: %q", n.Webhook, n.Title)
			}
		}
		hooks.mu.Unlock()
		for _, j := range jobsOfKind(t, q, KindNotify) {
			if j.State != rivertype.JobStateCompleted || j.Attempt != 3 {
				t.Errorf("delivery job %d: %s after %d attempts, want completed after 3", j.ID, j.State, j.Attempt)
			}
		}

		if err := st.ClearHostBlock(ctx, host); err != nil {
			t.Fatal(err)
		}
		check(t, q)
		check(t, q)
		all := want("review:"+host+" firing 1", "review:"+host+" resolved 1")
		if got := hooks.delivered(); !sameCounts(got, all) {
			t.Errorf("after the host was cleared, delivered %v, want %v", sortedKeys(got), sortedKeys(all))
		}
	})
}

// A webhook that never answers holds no crawl: with one crawl worker, a
// crawl asked for while the alert's delivery hangs completes.
func TestHangingWebhookDoesNotBlockCrawls(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := alertWorld(t, st)
		hang := make(chan struct{})
		hooks := newWebhooks(t, 0, hang)
		flagHost(t, st, "www.flaky.gov.test")
		a := newAlerter(t, st, hooks.config())
		// No client timeout: the webhook hangs for as long as the test
		// holds it, not the 10 s a delivery waits at most in serve.
		a.HTTP = &http.Client{}
		q := startQueue(t, Options{Store: st, Fetch: w.Client, Bundle: w.Bundle, Alerter: a, Workers: 1, TickEvery: time.Hour})
		t.Cleanup(func() { close(hang) }) // runs before the queue stops
		waitFor(t, "the alert's delivery to reach the webhook", func() bool {
			_, open := hooks.state()
			return len(open) > 0
		})

		e, err := q.CrawlNow(ctx, firstTarget(t, st))
		if err != nil {
			t.Fatal(err)
		}
		var crawled *rivertype.JobRow
		waitFor(t, "the crawl", func() bool {
			crawled, err = q.jobs.JobGet(ctx, e.JobID)
			return err == nil && finished(crawled)
		})
		if crawled.State != rivertype.JobStateCompleted {
			t.Errorf("the crawl ended %s, want completed", crawled.State)
		}
		// The crawl was done while the first delivery still hung, not in a
		// pause between its attempts.
		if tries, open := hooks.state(); !open[0] || len(hooks.delivered()) != 0 {
			t.Errorf("when the crawl completed the first delivery had ended (requests %v, unanswered %v): it waited for the webhook", tries, open)
		}
	})
}

// The alerts' own retry schedule: 30 s after the first failure, then
// doubling, at most an hour apart.
func TestAlertRetrySchedule(t *testing.T) {
	w := &notifyWorker{q: &Queue{}}
	wantWaits := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}
	for i, wait := range wantWaits {
		attempt := i + 1
		before := time.Now()
		next := w.NextRetry(&river.Job[NotifyArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, Kind: KindNotify}})
		after := time.Now()
		if next.Before(before.Add(wait)) || next.After(after.Add(wait)) {
			t.Errorf("after attempt %d the next try is in about %v, want %v", attempt, next.Sub(before).Round(time.Second), wait)
		}
	}
}
