package browser

import (
	"context"
	"strings"
	"sync"
)

// hostSlots keeps at most one request in flight per host across all tabs,
// the same rule the direct fetcher keeps. A page asks for its
// scripts, styles and XHRs in parallel; the gate holds each paused request
// until the host's previous one has finished, so the site sees a browser
// visit as one request at a time, like any zhizhi visit.
type hostSlots struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func newHostSlots() *hostSlots {
	return &hostSlots{m: make(map[string]chan struct{})}
}

func (h *hostSlots) slot(host string) chan struct{} {
	host = strings.ToLower(host)
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.m[host]
	if !ok {
		c = make(chan struct{}, 1)
		h.m[host] = c
	}
	return c
}

func (h *hostSlots) acquire(ctx context.Context, host string) error {
	select {
	case h.slot(host) <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *hostSlots) release(host string) {
	select {
	case <-h.slot(host):
	default: // never held: nothing to free
	}
}
