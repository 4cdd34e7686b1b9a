package fetch

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFakeClockWakesSleepersAtTheirDeadline(t *testing.T) {
	ctx := context.Background()
	c := NewFakeClock(t0)
	woke := make(chan time.Duration, 3)
	for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
		go func() {
			if err := c.Sleep(ctx, d); err != nil {
				t.Error(err)
			}
			woke <- d
		}()
	}
	if err := c.WaitForSleepers(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if at, ok := c.NextWake(); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("NextWake = %v, %v", at, ok)
	}
	c.Advance(1500 * time.Millisecond)
	if d := <-woke; d != time.Second {
		t.Fatalf("woke %v first", d)
	}
	if c.Sleepers() != 2 {
		t.Fatalf("%d sleepers left, want 2", c.Sleepers())
	}
	c.Advance(1500 * time.Millisecond)
	got := map[time.Duration]bool{<-woke: true, <-woke: true}
	if !got[2*time.Second] || !got[3*time.Second] {
		t.Errorf("woke %v", got)
	}
	if !c.Now().Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Now = %v", c.Now())
	}
}

func TestFakeClockSleepCancelled(t *testing.T) {
	c := NewFakeClock(t0)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- c.Sleep(ctx, time.Hour) }()
	c.WaitForSleepers(context.Background(), 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if c.Sleepers() != 0 {
		t.Errorf("cancelled sleeper still registered")
	}
}

func TestRealClockSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (RealClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}
