package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// TestObserverHearsEveryRequestOnce: on the direct tier the observer hears
// of every crawl_log row once, and the ones it is told were sent are
// exactly the requests the site saw: robots.txt, a 200, a 304, a robots.txt revalidated with a 304,
// a body too large (sent, no answer), a redirect whose next hop the guard
// refuses, a path robots.txt forbids and a URL that does not parse.
func TestObserverHearsEveryRequestOnce(t *testing.T) {
	var (
		mu     sync.Mutex
		events []RequestEvent
	)
	e := newSimEnv(t, 1, ClientOptions{ObserveRequest: func(ev RequestEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}})
	e.advancing(t, true)
	ctx := context.Background()
	if err := e.w.SetFault(qingcheng, sim.Fault{Kind: sim.FaultRobotsTighten, Path: "/forbidden/"}); err != nil {
		t.Fatal(err)
	}
	if err := e.w.SetFault(qingcheng, sim.Fault{Kind: sim.FaultRedirect, PathPrefix: "/go", Location: "http://127.0.0.1/x"}); err != nil {
		t.Fatal(err)
	}
	u := truthURL(t, e.w, qingcheng, "/")
	first := mustDo(t, e.c, Request{URL: u, Purpose: model.PurposeDetail, Conditional: true})
	if second := mustDo(t, e.c, Request{URL: u, Purpose: model.PurposeDetail, Conditional: true}); !second.NotModified {
		t.Fatalf("second request: status %d, want a 304", second.Status)
	}
	_, at := arrivals(e.w, qingcheng)
	e.clock.Set(at[0].Add(5 * time.Minute)) // robots.txt is revalidated from 5 minutes on
	mustDo(t, e.c, Request{URL: u, Purpose: model.PurposeDetail, Conditional: true})
	var tl *ErrTooLarge
	if _, err := e.c.Do(ctx, Request{URL: u, MaxBytes: 10}); !errors.As(err, &tl) {
		t.Fatalf("10-byte cap: %v, want too large", err)
	}
	var rf *RefusedError
	if _, err := e.c.Do(ctx, Request{URL: "http://" + qingcheng + "/go"}); !errors.As(err, &rf) {
		t.Fatalf("redirect to loopback: %v, want refused", err)
	}
	var re *RobotsError
	if _, err := e.c.Do(ctx, Request{URL: "http://" + qingcheng + "/forbidden/a.html"}); !errors.As(err, &re) {
		t.Fatalf("forbidden path: %v, want refused by robots.txt", err)
	}
	if _, err := e.c.Do(ctx, Request{URL: "http://%zz/"}); err == nil {
		t.Fatal("unparsable URL: no error")
	}

	mu.Lock()
	defer mu.Unlock()
	if rows := crawlLogRows(t, e.st, ""); len(events) != len(rows) {
		t.Errorf("%d events for %d crawl_log rows", len(events), len(rows))
	}
	log := e.w.AccessLog(qingcheng)
	sent, tooLarge := 0, 0
	unsent := map[string]int{}
	for _, ev := range events {
		if !ev.Sent {
			unsent[ev.ErrorClass]++
			continue
		}
		sent++
		if ev.Host != qingcheng || ev.Tier != TierDirect {
			t.Errorf("sent event %+v: want host %s on the direct tier", ev, qingcheng)
		}
		if ev.ErrorClass == ClassTooLarge {
			tooLarge++
		}
	}
	if sent != len(log) {
		t.Errorf("%d events say sent, the site saw %d requests", sent, len(log))
	}
	if tooLarge != 1 {
		t.Errorf("%d sent events of class too_large, want 1", tooLarge)
	}
	if unsent[ClassRobots] != 1 || unsent[ClassSSRF] != 2 || len(unsent) != 2 {
		// The unparsable URL is refused by the guard too.
		t.Errorf("unsent events by class %v, want robots 1 and ssrf 2 (the loopback hop, the bad URL)", unsent)
	}

	// A 304 spares the stored body; a revalidated robots.txt spares the file.
	robots := plainGet(t, e.w, "http://"+qingcheng+"/robots.txt")
	var saved []int64
	for _, ev := range events {
		if ev.Status == http.StatusNotModified {
			saved = append(saved, ev.SavedBytes)
		}
	}
	want := []int64{int64(len(first.Body)), int64(len(robots)), int64(len(first.Body))}
	if len(saved) != len(want) {
		t.Fatalf("304 events saved %v, want %v", saved, want)
	}
	for i := range want {
		if saved[i] != want[i] {
			t.Errorf("304 events saved %v, want %v", saved, want)
			break
		}
	}
}

func plainGet(t *testing.T, w *sim.World, u string) []byte {
	t.Helper()
	resp, err := w.HTTPClient().Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestObserverDialRefusalIsNotSent: a name that resolves to a private
// address is refused only when the guard dials it; that request never
// left, though time passed on it.
func TestObserverDialRefusalIsNotSent(t *testing.T) {
	var events []RequestEvent
	e := newSimEnv(t, 1, ClientOptions{})
	c, err := NewClient(ClientOptions{
		Store: e.st, Clock: e.clock, Version: "test", ContactURL: "https://zhizhi.example/contact",
		Logger: quietLogger(), Dial: loopbackOnly(t),
		LookupIP: func(context.Context, string) ([]net.IP, error) {
			return []net.IP{net.ParseIP("10.1.2.3")}, nil
		},
		ObserveRequest: func(ev RequestEvent) { events = append(events, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(context.Background(), Request{URL: "http://intranet.example/page"}); err == nil {
		t.Fatal("a name resolving to 10.1.2.3 was fetched")
	}
	if len(events) == 0 {
		t.Fatal("no event")
	}
	for _, ev := range events {
		if ev.Sent {
			t.Errorf("event %+v says sent; the guard refused to dial", ev)
		}
	}
}
