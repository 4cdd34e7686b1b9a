package fetch

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// Default politeness.
const (
	DefaultBurst       = 3
	DefaultInterval    = 2 * time.Second // one token per interval
	DefaultMaxPerHost  = 1
	DefaultMaxInFlight = 4
)

// HostPolicy is what configuration and robots.txt say about one host.
type HostPolicy struct {
	// Interval is the site's own spacing (config rate.interval_sec). It
	// can only make things stricter, unless Owned.
	Interval time.Duration
	// CrawlDelay from robots.txt; honoured when stricter.
	CrawlDelay time.Duration
	// Owned hosts (the simulated web in benchmarks) may use an Interval
	// and Burst looser than the defaults.
	Owned bool
	Burst int
}

// effective returns the bucket a host gets. A stricter interval (site or
// Crawl-delay) turns the bucket into plain spacing (burst 1): a site that
// asks for N seconds between requests means between every two requests.
func (p HostPolicy) effective() (burst int, interval time.Duration) {
	burst, interval = DefaultBurst, DefaultInterval
	if p.Owned {
		if p.Interval > 0 {
			interval = p.Interval
		}
		if p.Burst > 0 {
			burst = p.Burst
		}
	} else if p.Interval > interval {
		burst, interval = 1, p.Interval
	}
	if p.CrawlDelay > interval {
		burst, interval = 1, p.CrawlDelay
	}
	return burst, interval
}

// SharedHosts lets the limiters of every process on one database act as
// one limiter per host: a cross-process lock held for each request (so the
// site never sees two of zhizhi's requests in flight, whichever process
// sent them), and the host's token bucket, read under that lock and written
// when a token is taken (so a new process continues the bucket where the
// last one left it). *store.Store implements it.
type SharedHosts interface {
	LockHost(ctx context.Context, host string) (release func(), err error)
	GetHostBucket(ctx context.Context, host string) (tokens float64, at time.Time, ok bool, err error)
	PutHostBucket(ctx context.Context, host string, tokens float64, at time.Time) error
}

// Limiter spaces requests per host with a token bucket (burst 3, one token
// per 2 s by default), keeps at most one request in flight per host and at
// most four overall, and holds a host back until a given time (backoff,
// Retry-After). All time comes from the injected Clock. With SharedHosts
// the per-host rules hold across processes too.
//
// The bucket is kept as a theoretical arrival time (GCRA): the next token
// is due at tat; a request at now may go if tat - now ≤ (burst-1)·interval.
// That is the same bucket as T(t) = min(b, T(t₀) + r·(t − t₀)), but in exact
// durations rather than fractional tokens.
type Limiter struct {
	clock       Clock
	shared      SharedHosts
	maxPerHost  int
	maxInFlight int

	mu       sync.Mutex
	hosts    map[string]*hostSlot
	inFlight int
	released chan struct{} // closed and replaced at every release
}

type hostSlot struct {
	policy    HostPolicy
	tat       time.Time // theoretical arrival time of the next token
	notBefore time.Time
	last      time.Time // start of the last request
	// reserved counts this process's requests that hold the host's slot,
	// from the moment they claim it (before the cross-process lock and the
	// token) until release.
	reserved int
}

// NewLimiter returns a Limiter with the default caps, for one process.
func NewLimiter(clock Clock) *Limiter {
	return &Limiter{
		clock:       clock,
		maxPerHost:  DefaultMaxPerHost,
		maxInFlight: DefaultMaxInFlight,
		hosts:       map[string]*hostSlot{},
		released:    make(chan struct{}),
	}
}

// NewSharedLimiter returns a Limiter whose per-host lock and bucket are
// shared with every other process using shared.
func NewSharedLimiter(clock Clock, shared SharedHosts) *Limiter {
	l := NewLimiter(clock)
	l.shared = shared
	return l
}

func (l *Limiter) slot(host string) *hostSlot {
	s := l.hosts[host]
	if s == nil {
		s = &hostSlot{}
		l.hosts[host] = s
	}
	return s
}

// SetPolicy sets a host's policy. A tightened policy (a new robots.txt
// Crawl-delay) applies to the very next request.
func (l *Limiter) SetPolicy(host string, p HostPolicy) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slot(host).policy = p
}

// NotBefore holds every request to host until t (backoff, Retry-After).
// An earlier t than one already set does not shorten the hold.
func (l *Limiter) NotBefore(host string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slot(host)
	if t.After(s.notBefore) {
		s.notBefore = t
	}
}

// Drain empties a host's bucket, as when a worker takes over a host lease
// : the newcomer cannot know what the last holder spent.
func (l *Limiter) Drain(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slot(host)
	burst, interval := s.policy.effective()
	now := l.clock.Now()
	if full := now.Add(time.Duration(burst) * interval); s.tat.Before(full) {
		s.tat = full
	}
}

// Acquire waits until a request to host may start, then counts it in
// flight; call release when the response is read. It returns ctx.Err() if
// ctx ends first.
func (l *Limiter) Acquire(ctx context.Context, host string) (release func(), err error) {
	return l.acquire(ctx, host, true, true)
}

// Hold waits for an in-flight slot at host (and overall) without spending a
// token: the browser tier holds the host for a whole page load while every
// request the page makes spends its own token through Take.
func (l *Limiter) Hold(ctx context.Context, host string) (release func(), err error) {
	return l.acquire(ctx, host, true, false)
}

// Take waits for a token of host's bucket (and any hold) and spends it,
// without counting a request in flight. It is for requests made inside a
// Hold, such as the sub-requests of a page the browser renders.
func (l *Limiter) Take(ctx context.Context, host string) error {
	_, err := l.acquire(ctx, host, false, true)
	return err
}

// TakeSent is Take for a request whose arrival at the site is known only
// once its answer begins (the browser proxy's): sent, called then, dates
// the token from that moment (countFromEnd), so a request delayed between
// its token and the wire cannot bring the next one closer to it than the
// bucket allows. The host's one request in flight must be held across
// both, as internal/browser holds it for the browser's requests.
func (l *Limiter) TakeSent(ctx context.Context, host string) (sent func(), err error) {
	since := l.clock.Now()
	if err := l.Take(ctx, host); err != nil {
		return nil, err
	}
	return func() { l.countFromEnd(ctx, host, since) }, nil
}

// acquire claims, in order: this process's slot at host (slot), the
// cross-process lock of host (slot, when shared), a token (token, after
// continuing the shared bucket) and an overall slot (slot). Claiming the
// host first keeps one waiter per host per process on the cross-process
// lock; taking the overall slot last keeps a request that waits for its
// token from holding one of the four, and from counting as in flight.
func (l *Limiter) acquire(ctx context.Context, host string, slot, token bool) (release func(), err error) {
	var s *hostSlot
	unlock := func() {}
	if slot {
		if s, err = l.reserve(ctx, host); err != nil {
			return nil, err
		}
		if l.shared != nil {
			u, err := l.shared.LockHost(ctx, host)
			if err != nil {
				l.unreserve(s, false)
				return nil, fmt.Errorf("limiter: %w", err)
			}
			unlock = u
		}
	}
	fail := func(err error) (func(), error) {
		unlock()
		if slot {
			l.unreserve(s, false)
		}
		return nil, err
	}
	if token && l.shared != nil {
		tokens, at, ok, err := l.shared.GetHostBucket(ctx, host)
		if err != nil {
			return fail(fmt.Errorf("limiter: %w", err))
		}
		if ok {
			l.mu.Lock()
			l.slot(host).continueBucket(tokens, at)
			l.mu.Unlock()
		}
	}
	var (
		left    float64
		at      time.Time
		started time.Time // when the claim was granted
	)
	for {
		l.mu.Lock()
		s = l.slot(host)
		now := l.clock.Now()
		if token {
			if wait := s.wait(now); wait > 0 {
				l.mu.Unlock()
				if err := l.clock.Sleep(ctx, wait); err != nil {
					return fail(err)
				}
				continue
			}
		}
		if slot && l.inFlight >= l.maxInFlight {
			ch := l.released
			l.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return fail(ctx.Err())
			}
		}
		if token {
			_, interval := s.policy.effective()
			if s.tat.Before(now) {
				s.tat = now
			}
			s.tat = s.tat.Add(interval)
			s.last = now
			left, at = s.bucketAt(now)
		}
		if slot {
			l.inFlight++
		}
		started = now
		l.mu.Unlock()
		break
	}
	var once sync.Once
	end := func(sent bool) {
		once.Do(func() {
			if sent && slot {
				l.countFromEnd(ctx, host, started)
			}
			unlock()
			if slot {
				l.unreserve(s, true)
			}
		})
	}
	if token && l.shared != nil {
		if err := l.shared.PutHostBucket(ctx, host, left, at); err != nil {
			// Unrecorded, the token would be spent again by the next
			// process: refuse the request instead.
			end(false)
			return nil, fmt.Errorf("limiter: %w", err)
		}
	}
	return func() { end(true) }, nil
}

// countFromEnd dates the token of a request that has ended from its end
// rather than from when it was taken: the site may have seen the request
// as late as that (a slow database write, a busy machine or a browser
// between the token and the wire), and the next token must not come sooner
// than one interval after the site saw it. For a hold, the page's last
// request ended by now. Under a full bucket's worth of backlog it changes
// nothing; it only takes back the part of a burst that the delay used up.
// With shared hosts the new state is written before the host's lock goes.
func (l *Limiter) countFromEnd(ctx context.Context, host string, since time.Time) {
	l.mu.Lock()
	s := l.slot(host)
	now := l.clock.Now()
	_, interval := s.policy.effective()
	if s.last.Before(since) || !s.tat.Before(now.Add(interval)) {
		// No token spent under this claim (a hold whose page made no
		// request), or the bucket is already as strict.
		l.mu.Unlock()
		return
	}
	s.tat = now.Add(interval)
	left, at := s.bucketAt(now)
	l.mu.Unlock()
	if l.shared != nil {
		// Released after its context ended (a cancelled crawl) the state
		// still counts: give the write a few seconds of its own.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.shared.PutHostBucket(wctx, host, left, at) // the stricter state is lost only with the database
	}
}

// reserve waits until this process has no request at host, then claims it.
func (l *Limiter) reserve(ctx context.Context, host string) (*hostSlot, error) {
	for {
		l.mu.Lock()
		s := l.slot(host)
		if s.reserved < l.maxPerHost {
			s.reserved++
			l.mu.Unlock()
			return s, nil
		}
		ch := l.released
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// unreserve gives back a host claim, and the overall slot when the request
// went out.
func (l *Limiter) unreserve(s *hostSlot, inFlight bool) {
	l.mu.Lock()
	s.reserved--
	if inFlight {
		l.inFlight--
	}
	close(l.released)
	l.released = make(chan struct{})
	l.mu.Unlock()
}

// bucketAt expresses the bucket as tokens left at a stored instant: now
// rounded up to the microsecond the database keeps (later is the stricter
// side for the "last request" it also stands for). Converted back by
// continueBucket, it gives the same theoretical arrival time.
func (s *hostSlot) bucketAt(now time.Time) (tokens float64, at time.Time) {
	burst, interval := s.policy.effective()
	at = now.Truncate(time.Microsecond)
	if at.Before(now) {
		at = at.Add(time.Microsecond)
	}
	return float64(burst) - float64(s.tat.Sub(at))/float64(interval), at
}

// continueBucket folds in the bucket another process (or an earlier run)
// left: tokens at at, under this host's policy. It only ever makes the
// bucket emptier, never fuller.
func (s *hostSlot) continueBucket(tokens float64, at time.Time) {
	burst, interval := s.policy.effective()
	tokens = min(tokens, float64(burst))
	tat := at.Add(time.Duration(math.Round((float64(burst) - tokens) * float64(interval))))
	if tat.After(s.tat) {
		s.tat = tat
	}
	if at.After(s.last) {
		s.last = at
	}
}

// InFlight returns how many requests hold a slot right now.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight
}

// wait is how long a request at now must wait for a token and any hold.
func (s *hostSlot) wait(now time.Time) time.Duration {
	burst, interval := s.policy.effective()
	var w time.Duration
	if tolerance := time.Duration(burst-1) * interval; s.tat.Sub(now) > tolerance {
		w = s.tat.Sub(now) - tolerance
	}
	// A policy tightened since the last request (a new Crawl-delay) must
	// hold from that request on, whatever the bucket earned before.
	if burst == 1 && !s.last.IsZero() {
		if d := s.last.Add(interval).Sub(now); d > w {
			w = d
		}
	}
	if hold := s.notBefore.Sub(now); hold > w {
		w = hold
	}
	return w
}

// Wait returns how long a request to host would wait for its bucket and
// holds right now, ignoring the in-flight caps. For display and tests.
func (l *Limiter) Wait(host string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.slot(host).wait(l.clock.Now())
}
