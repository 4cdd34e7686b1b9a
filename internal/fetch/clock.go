package fetch

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is the source of time for every rule that depends on it: token
// buckets, backoff, breakers and robots.txt cache expiry. Tests use FakeClock
// so waits are exact and never real.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first; it
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits for d on the wall clock or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FakeClock is a manual clock for tests. Time moves only through Advance or
// Set; sleepers whose deadline has been reached wake in deadline order.
type FakeClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []*fakeSleeper
	seq      int
	changed  chan struct{} // closed and replaced whenever a sleeper registers
}

type fakeSleeper struct {
	until time.Time
	seq   int
	wake  chan struct{}
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep blocks until the fake time reaches Now()+d or ctx is done.
func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	if d <= 0 {
		c.mu.Unlock()
		return ctx.Err()
	}
	c.seq++
	s := &fakeSleeper{until: c.now.Add(d), seq: c.seq, wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()

	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		c.remove(s)
		c.mu.Unlock()
		// A wake may have raced with cancellation; either outcome is fine,
		// but the caller asked to stop, so report that.
		return ctx.Err()
	}
}

func (c *FakeClock) remove(s *fakeSleeper) {
	for i, x := range c.sleepers {
		if x == s {
			c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
			return
		}
	}
}

// Advance moves the fake time forward by d and wakes every sleeper whose
// deadline is reached, earliest first.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.wakeLocked()
	c.mu.Unlock()
}

// Set moves the fake time to t (never backwards) and wakes due sleepers.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.wakeLocked()
	c.mu.Unlock()
}

func (c *FakeClock) wakeLocked() {
	sort.SliceStable(c.sleepers, func(i, j int) bool {
		if c.sleepers[i].until.Equal(c.sleepers[j].until) {
			return c.sleepers[i].seq < c.sleepers[j].seq
		}
		return c.sleepers[i].until.Before(c.sleepers[j].until)
	})
	n := 0
	for _, s := range c.sleepers {
		if s.until.After(c.now) {
			break
		}
		close(s.wake)
		n++
	}
	c.sleepers = append([]*fakeSleeper(nil), c.sleepers[n:]...)
}

// Sleepers returns how many goroutines are blocked in Sleep.
func (c *FakeClock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}

// WaitForSleepers blocks until at least n goroutines are blocked in Sleep or
// ctx is done. Tests use it to advance time only once the code under test is
// waiting, which keeps them deterministic.
func (c *FakeClock) WaitForSleepers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.sleepers) >= n {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NextWake returns the earliest sleeper deadline and true, or false when
// nobody sleeps.
func (c *FakeClock) NextWake() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sleepers) == 0 {
		return time.Time{}, false
	}
	min := c.sleepers[0].until
	for _, s := range c.sleepers[1:] {
		if s.until.Before(min) {
			min = s.until
		}
	}
	return min, true
}

// AutoAdvance moves the clock to the next sleeper's deadline whenever
// somebody sleeps and idle reports nothing on the wire (nil: always), until
// the returned stop is called; stop waits for it to end. Time then never
// moves between a request's start and its end, so a site's stamps on the
// same clock are exactly the client's decisions.
func (c *FakeClock) AutoAdvance(idle func() bool) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			if next, ok := c.NextWake(); ok && (idle == nil || idle()) {
				c.Set(next)
				continue
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	return func() { close(quit); <-done }
}
