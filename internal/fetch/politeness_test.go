package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"zhizhi/internal/model"
)

var t0 = time.Date(2026, 3, 5, 8, 0, 0, 0, time.UTC)

func TestBackoffDelaySeries(t *testing.T) {
	want := []time.Duration{0, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, 64 * time.Second, 64 * time.Second}
	for k, w := range want {
		if got := BackoffDelay(k); got != w {
			t.Errorf("BackoffDelay(%d) = %v, want %v", k, got, w)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 5, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{"Thu, 05 Mar 2026 08:01:30 GMT", 90 * time.Second, true},
		{"Thu, 05 Mar 2026 07:00:00 GMT", 0, true},
		{"-5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCountsAsError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		err    error
		want   bool
	}{
		{"200", 200, nil, false},
		{"304", 304, nil, false},
		{"404", 404, nil, false},
		{"429", 429, nil, true},
		{"500", 500, nil, true},
		{"503", 503, nil, true},
		{"timeout", 0, fmt.Errorf("fetch: %w", ErrTimeout), true},
		{"connection refused", 0, errors.New("dial tcp: connection refused"), true},
		{"our SSRF refusal", 0, &RefusedError{Host: "x", Reason: "private address"}, false},
		{"our size limit", 0, &ErrTooLarge{Limit: 1, Kind: "raw"}, false},
		{"cancelled by us", 0, context.Canceled, false},
	}
	for _, tt := range tests {
		if got := CountsAsError(tt.status, tt.err); got != tt.want {
			t.Errorf("%s: CountsAsError = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// memStore is a HostStateStore in memory; a "restart" is a new tracker on
// the same store.
type memStore struct {
	mu sync.Mutex
	m  map[string]model.HostState
}

func (s *memStore) GetHostState(ctx context.Context, host string) (model.HostState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[host]
	if !ok {
		return model.HostState{Host: host}, nil
	}
	return st, nil
}

func (s *memStore) PutHostState(ctx context.Context, st model.HostState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]model.HostState{}
	}
	s.m[st.Host] = st
	return nil
}

func TestBreaker503Run(t *testing.T) {
	ctx := context.Background()
	clock := NewFakeClock(t0)
	store := &memStore{}
	tr := &HealthTracker{Clock: clock, Store: store}
	const host = "www.gd.gov.test"
	bucketAt := t0.Add(-time.Minute)
	store.PutHostState(ctx, model.HostState{Host: host, BucketTokens: 2.5, BucketAt: &bucketAt})

	// A run of 503s: each waits out its backoff exactly, and the 5th
	// opens the breaker.
	wantDelays := []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second}
	for i, want := range wantDelays {
		if _, err := tr.Check(ctx, host); err != nil {
			t.Fatalf("before error %d: %v", i+1, err)
		}
		h, f, err := tr.Record(ctx, host, 503, http.Header{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.K != i+1 || f.Delay != want {
			t.Errorf("error %d: k=%d delay=%v, want k=%d delay=%v", i+1, f.K, f.Delay, i+1, want)
		}
		if f.Tripped != (i+1 == 5) {
			t.Errorf("error %d: tripped=%v", i+1, f.Tripped)
		}
		if i+1 < 5 {
			// Blocked until exactly the end of the backoff.
			clock.Advance(want - time.Nanosecond)
			if _, err := tr.Check(ctx, host); err == nil {
				t.Fatalf("error %d: released a nanosecond early", i+1)
			}
			clock.Advance(time.Nanosecond)
		}
		_ = h
	}

	// Restart: a new tracker on the same store still refuses the host.
	tr = &HealthTracker{Clock: clock, Store: store}
	_, err := tr.Check(ctx, host)
	var be *BlockedError
	if !errors.As(err, &be) || be.Reason != "breaker open" || !be.Until.Equal(clock.Now().Add(24*time.Hour)) {
		t.Fatalf("after restart: %v, want breaker open for 24h", err)
	}
	clock.Advance(24*time.Hour - time.Second)
	if _, err := tr.Check(ctx, host); err == nil {
		t.Fatal("breaker released before 24h")
	}
	clock.Advance(time.Second)
	if _, err := tr.Check(ctx, host); err != nil {
		t.Fatalf("breaker still holds after 24h: %v", err)
	}
	// The bucket survived the health updates.
	st, _ := store.GetHostState(ctx, host)
	if st.BucketTokens != 2.5 || st.BucketAt == nil || !st.BucketAt.Equal(bucketAt) {
		t.Errorf("bucket fields lost: %+v", st)
	}
	// A success resets the run.
	if _, _, err := tr.Record(ctx, host, 200, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, f, _ := tr.Record(ctx, host, 500, nil, nil)
	if f.K != 1 || f.Delay != 4*time.Second {
		t.Errorf("after success: k=%d delay=%v, want 1, 4s", f.K, f.Delay)
	}
}

func TestBreakerHalfOpenAndReview(t *testing.T) {
	clock := NewFakeClock(t0)
	h := HostHealth{Host: "h"}
	trips := 0
	for day := 0; day < 3; day++ {
		for h.Blocked(clock.Now()) == nil {
			f := h.RecordFailure(clock.Now(), 0)
			if f.Tripped {
				trips++
				if f.NeedsReview != (trips == 3) {
					t.Errorf("trip %d: NeedsReview=%v", trips, f.NeedsReview)
				}
				break
			}
			clock.Set(*h.BackoffUntil)
		}
		clock.Set(*h.BreakerUntil)
	}
	if trips != 3 || !h.NeedsReview {
		t.Errorf("trips=%d needsReview=%v, want 3 trips and review", trips, h.NeedsReview)
	}

	// The window is 7 days: a third trip a second before 7 days after the
	// first flags the host; one exactly 7 days after does not.
	for _, tc := range []struct {
		third  time.Duration
		review bool
	}{
		{7*24*time.Hour - time.Second, true},
		{7 * 24 * time.Hour, false},
	} {
		h = HostHealth{Host: "h2"}
		for _, at := range []time.Duration{0, 3 * 24 * time.Hour, tc.third} {
			for range 5 {
				h.RecordFailure(t0.Add(at), 0)
			}
			h.RecordSuccess()
		}
		if h.NeedsReview != tc.review {
			t.Errorf("trips at 0, 3 days and %v: needsReview=%v, want %v", tc.third, h.NeedsReview, tc.review)
		}
	}
}

func TestRetryAfterWaitsExactly(t *testing.T) {
	ctx := context.Background()
	clock := NewFakeClock(t0)
	tr := &HealthTracker{Clock: clock, Store: &memStore{}}
	_, f, err := tr.Record(ctx, "h", 429, http.Header{"Retry-After": {"120"}}, nil)
	if err != nil || f.Delay != 120*time.Second {
		t.Fatalf("delay %v err %v, want 120s", f.Delay, err)
	}
	// Retry-After shorter than the backoff: the backoff holds.
	_, f, _ = tr.Record(ctx, "h2", 503, http.Header{"Retry-After": {"1"}}, nil)
	if f.Delay != 4*time.Second {
		t.Errorf("delay %v, want 4s", f.Delay)
	}

	// Through the limiter: the request waits exactly until then.
	l := NewLimiter(clock)
	h, _ := tr.Check(ctx, "h")
	_ = h
	st, _ := tr.Store.GetHostState(ctx, "h")
	l.NotBefore("h", *st.BackoffUntil)
	if w := l.Wait("h"); w != 120*time.Second {
		t.Errorf("limiter wait %v, want 120s", w)
	}
	done := make(chan time.Time)
	go func() {
		rel, err := l.Acquire(ctx, "h")
		if err != nil {
			t.Error(err)
		}
		done <- clock.Now()
		rel()
	}()
	clock.WaitForSleepers(ctx, 1)
	clock.Advance(119 * time.Second)
	select {
	case <-done:
		t.Fatal("request went before Retry-After elapsed")
	default:
	}
	clock.WaitForSleepers(ctx, 1)
	clock.Advance(time.Second)
	if at := <-done; !at.Equal(t0.Add(120 * time.Second)) {
		t.Errorf("request at %v, want t0+120s", at)
	}
}

func TestLimiterWaits(t *testing.T) {
	tests := []struct {
		name   string
		policy HostPolicy
		// waits before each of the successive requests, each started as
		// soon as allowed
		want []time.Duration
	}{
		{"default: burst 3 then one per 2 s", HostPolicy{}, []time.Duration{0, 0, 0, 2 * time.Second, 2 * time.Second}},
		{"stricter crawl-delay wins", HostPolicy{CrawlDelay: 10 * time.Second}, []time.Duration{0, 10 * time.Second, 10 * time.Second}},
		{"stricter site interval wins", HostPolicy{Interval: 5 * time.Second}, []time.Duration{0, 5 * time.Second, 5 * time.Second}},
		{"looser site interval ignored when not owned", HostPolicy{Interval: 100 * time.Millisecond, Burst: 10}, []time.Duration{0, 0, 0, 2 * time.Second}},
		{"owned hosts may loosen", HostPolicy{Owned: true, Interval: 100 * time.Millisecond, Burst: 1}, []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond}},
		{"owned hosts still obey a crawl-delay", HostPolicy{Owned: true, Interval: time.Millisecond, CrawlDelay: 3 * time.Second}, []time.Duration{0, 3 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewFakeClock(t0)
			l := NewLimiter(clock)
			l.SetPolicy("h", tt.policy)
			for i, want := range tt.want {
				if got := l.Wait("h"); got != want {
					t.Fatalf("request %d: wait %v, want %v", i+1, got, want)
				}
				clock.Advance(want)
				rel, err := l.Acquire(context.Background(), "h")
				if err != nil {
					t.Fatal(err)
				}
				rel()
			}
		})
	}
}

func TestLimiterTightenedPolicyAppliesAtOnce(t *testing.T) {
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	rel, _ := l.Acquire(context.Background(), "h")
	rel()
	clock.Advance(time.Second)
	l.SetPolicy("h", HostPolicy{CrawlDelay: 30 * time.Second})
	if w := l.Wait("h"); w != 29*time.Second {
		t.Errorf("wait %v after a new 30 s crawl-delay, want 29s (30 s after the last request)", w)
	}
}

// TestLimiterWindowRule drives one host as fast as the limiter allows and
// checks the rule the simulation's access log is checked with: in every
// window of t seconds at most 3 + t/2 requests.
func TestLimiterWindowRule(t *testing.T) {
	ctx := context.Background()
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	var starts []time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			rel, err := l.Acquire(ctx, "h")
			if err != nil {
				t.Error(err)
				return
			}
			starts = append(starts, clock.Now())
			rel()
		}
	}()
	for {
		select {
		case <-done:
			goto check
		default:
		}
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		if clock.WaitForSleepers(wctx, 1) == nil {
			if at, ok := clock.NextWake(); ok {
				clock.Set(at)
			}
		}
		cancel()
	}
check:
	if len(starts) != 40 {
		t.Fatalf("%d requests", len(starts))
	}
	for i := range starts {
		for j := i; j < len(starts); j++ {
			window := starts[j].Sub(starts[i])
			n := j - i + 1
			if float64(n) > 3+window.Seconds()/2 {
				t.Fatalf("%d requests within %v", n, window)
			}
		}
	}
	if got := starts[39].Sub(starts[0]); got != 37*2*time.Second {
		t.Errorf("40 requests took %v, want exactly 74s (3 burst + 37 at 2 s)", got)
	}
}

func TestLimiterInFlightCaps(t *testing.T) {
	ctx := context.Background()
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	hosts := []string{"a", "b", "c", "d", "e", "f"}
	for _, h := range hosts {
		l.SetPolicy(h, HostPolicy{Owned: true, Interval: time.Nanosecond, Burst: 1000})
	}
	var total, maxTotal atomic.Int32
	perHost := map[string]*atomic.Int32{}
	for _, h := range hosts {
		perHost[h] = &atomic.Int32{}
	}
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		h := hosts[i%len(hosts)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				rel, err := l.Acquire(ctx, h)
				if err != nil {
					t.Error(err)
					return
				}
				if n := perHost[h].Add(1); n > 1 {
					t.Errorf("%d requests in flight at host %s", n, h)
				}
				n := total.Add(1)
				for {
					m := maxTotal.Load()
					if n <= m || maxTotal.CompareAndSwap(m, n) {
						break
					}
				}
				if n > 4 {
					t.Errorf("%d requests in flight overall", n)
				}
				time.Sleep(10 * time.Microsecond) // hold the slot so others contend
				perHost[h].Add(-1)
				total.Add(-1)
				rel()
			}
		}()
	}
	// Owned hosts with a 1 ns interval still need the clock to move.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				clock.Advance(time.Millisecond)
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	wg.Wait()
	close(stop)
	if maxTotal.Load() < 2 {
		t.Logf("contention was low (max %d in flight)", maxTotal.Load())
	}
}

func TestLimiterAcquireHonoursContext(t *testing.T) {
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	l.NotBefore("h", t0.Add(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := l.Acquire(ctx, "h")
		errc <- err
	}()
	clock.WaitForSleepers(context.Background(), 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func BenchmarkLimiterAcquire(b *testing.B) {
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	l.SetPolicy("h", HostPolicy{Owned: true, Interval: time.Nanosecond, Burst: 1 << 30})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rel, err := l.Acquire(ctx, "h")
		if err != nil {
			b.Fatal(err)
		}
		rel()
	}
}

// TestLimiterCountsARequestFromItsEnd: a request may reach the site as late
// as its answer comes back (a slow database write, a busy machine, a
// browser between the token and the wire). Counted from its token alone, a
// request that took 1.5 s to go out and the two quick ones after it would
// let a fourth reach the site half a second after the first: four within
// 0.5 s where the bucket allows 3 + t/2. Counted from its end, the fourth
// waits 2 s after the first request ended.
func TestLimiterCountsARequestFromItsEnd(t *testing.T) {
	ctx := context.Background()
	clock := NewFakeClock(t0)
	l := NewLimiter(clock)
	rel, err := l.Acquire(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(1500 * time.Millisecond) // the first request is slow to leave
	rel()
	for range 2 {
		rel, err := l.Acquire(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	if w := l.Wait("h"); w != 2*time.Second {
		t.Errorf("the fourth request would wait %v, want 2s after the first one ended", w)
	}

	t.Run("hold", func(t *testing.T) {
		clock := NewFakeClock(t0)
		l := NewLimiter(clock)
		hold, err := l.Hold(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Take(ctx, "h"); err != nil { // the page's only request
			t.Fatal(err)
		}
		clock.Advance(3 * time.Second) // the page took 3 s to load
		hold()
		for range 2 {
			rel, _ := l.Acquire(ctx, "h")
			rel()
		}
		if w := l.Wait("h"); w != 2*time.Second {
			t.Errorf("after a page visit, the fourth request would wait %v, want 2s after the visit ended", w)
		}
	})
	t.Run("hold without a request", func(t *testing.T) {
		clock := NewFakeClock(t0)
		l := NewLimiter(clock)
		hold, _ := l.Hold(ctx, "h")
		clock.Advance(3 * time.Second)
		hold()
		if w := l.Wait("h"); w != 0 {
			t.Errorf("a visit that sent nothing costs a wait of %v, want none", w)
		}
	})
}
