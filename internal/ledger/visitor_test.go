package ledger

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var cst = time.FixedZone("CST", 8*3600)

const chromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

func request(addr, ua string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = addr + ":40000"
	r.Header.Set("User-Agent", ua)
	return r
}

func newRecorder(t *testing.T, s *store.Store, c *testClock) *Recorder {
	t.Helper()
	// The loop never fires on its own: tests flush when they read.
	r := NewRecorder(s, RecorderOptions{Now: c.Now, FlushEvery: time.Hour})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func visitors(t *testing.T, r *Recorder, s *store.Store, day string) []store.VisitorDay {
	t.Helper()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Visitors(context.Background(), day)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestVisitorKey: one visitor per (address, user agent) per day, the same
// in every process sharing the database, a new one the next day.
func TestVisitorKey(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c := &testClock{t: time.Date(2026, 4, 23, 10, 0, 0, 0, cst)}
		a, b := newRecorder(t, s, c), newRecorder(t, s, c) // two serve processes
		a.Record(request("198.51.100.7", chromeUA), Hit{Kind: KindPage})
		b.Record(request("198.51.100.7", chromeUA), Hit{Kind: KindAsset})
		a.Record(request("198.51.100.7", "curl/8.5.0"), Hit{Kind: KindPage})
		b.Record(request("198.51.100.8", chromeUA), Hit{Kind: KindPage})
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		vs := visitors(t, a, s, "2026-04-23")
		if len(vs) != 3 {
			t.Fatalf("%d visitors, want 3 (same address and browser counted once): %+v", len(vs), vs)
		}
		var both *store.VisitorDay
		for i := range vs {
			if vs[i].Requests == 2 {
				both = &vs[i]
			}
		}
		if both == nil || both.Pages != 1 || both.Assets != 1 || both.UAClass != UABrowser {
			t.Errorf("the two processes did not agree on one visitor: %+v", vs)
		}
		// 00:30 the next day in Shanghai (16:30 UTC): a new salt, a new key.
		c.Set(time.Date(2026, 4, 24, 0, 30, 0, 0, cst))
		a.Record(request("198.51.100.7", chromeUA), Hit{Kind: KindPage})
		next := visitors(t, a, s, "2026-04-24")
		if len(next) != 1 || next[0].Key == both.Key {
			t.Errorf("the next day's key equals the day before's: %+v", next)
		}
	})
}

func TestPeerAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"198.51.100.7:40000":                     "198.51.100.7",
		"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443": "2001:db8:1:2::",
		"[2001:db8:1:2::9]:443":                  "2001:db8:1:2::",
		"[2001:db8:1:3::9]:443":                  "2001:db8:1:3::",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		if got := peerAddress(r); got != want {
			t.Errorf("peerAddress(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestNoAddressIsStored: after a day of traffic the database files hold
// neither the client's address nor its user agent.
func TestNoAddressIsStored(t *testing.T) {
	s := storetest.SQLite(t)
	c := &testClock{t: time.Date(2026, 4, 23, 10, 0, 0, 0, cst)}
	r := newRecorder(t, s, c)
	const addr = "203.0.113.77"
	const ua = "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36 Marker/4711"
	for i := range 20 {
		c.Set(c.Now().Add(time.Duration(30+i) * time.Second))
		r.Record(request(addr, ua), Hit{Kind: KindPage, CardID: int64(i%3 + 1)})
		r.Record(request(addr, ua), Hit{Kind: KindDoor, CardID: int64(i%3 + 1)})
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if vs := visitors(t, r, s, "2026-04-23"); len(vs) != 1 || vs[0].Requests != 40 {
		t.Fatalf("visitors: %+v", vs)
	}
	dir := filepath.Dir(s.DataDir())
	files, _ := filepath.Glob(filepath.Join(dir, "zhizhi.db*"))
	if len(files) == 0 {
		t.Fatalf("no database files in %s", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{addr, "Marker/4711"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %q", filepath.Base(f), secret)
			}
		}
	}
}

// TestCloseLosesNothing: hits still buffered at Close are written, and so
// is a hit that arrives after it.
func TestCloseLosesNothing(t *testing.T) {
	s := storetest.SQLite(t)
	c := &testClock{t: time.Date(2026, 4, 23, 10, 0, 0, 0, cst)}
	r := NewRecorder(s, RecorderOptions{Now: c.Now, FlushEvery: time.Hour})
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Go(func() {
			for range 50 {
				r.Record(request("192.0.2."+string(rune('1'+g)), chromeUA), Hit{Kind: KindAsset})
			}
		})
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Record(request("192.0.2.1", chromeUA), Hit{Kind: KindAsset})
	vs, err := s.Visitors(context.Background(), "2026-04-23")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, v := range vs {
		total += v.Assets
	}
	if len(vs) != 10 || total != 501 {
		t.Errorf("%d visitors with %d requests after Close, want 10 with 501", len(vs), total)
	}
}

// TestCloseDays: a day is closed once it is over (midnight in Shanghai)
// and the grace of 5 minutes has passed, not before; then its salt and
// visitors are gone and its tallies stay.
func TestCloseDays(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		c := &testClock{t: time.Date(2026, 4, 23, 23, 59, 0, 0, cst)}
		r := newRecorder(t, s, c)
		human := request("198.51.100.20", chromeUA)
		// Two pages 40 s apart, at 23:59:00 and 23:59:40.
		for i := range 2 {
			c.Set(c.Now().Add(time.Duration(i) * 40 * time.Second))
			r.Record(human, Hit{Kind: KindAsset})
			r.Record(human, Hit{Kind: KindPage, CardID: 5})
			r.Record(human, Hit{Kind: KindBeacon, Events: store.VisitorEvents{Scroll: 2, Pointer: 3}, Token: r.BeaconToken(human)})
		}
		for _, tc := range []struct {
			at   time.Time
			want string
		}{
			{time.Date(2026, 4, 23, 23, 59, 59, 0, cst), ""},
			{time.Date(2026, 4, 24, 0, 4, 59, 0, cst), ""},
			{time.Date(2026, 4, 24, 0, 5, 0, 0, cst), "2026-04-23"},
			{time.Date(2026, 4, 24, 0, 6, 0, 0, cst), ""},
		} {
			c.Set(tc.at)
			closed, err := r.CloseDays(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(closed, ","); got != tc.want {
				t.Errorf("at %s closed %q, want %q", tc.at.Format(time.TimeOnly), got, tc.want)
			}
		}
		tallies, err := s.HumanTallies(ctx, "2026-04-23")
		if err != nil || len(tallies) != 1 || tallies[0] != (store.DayTally{CardID: 5, Views: 2}) {
			t.Errorf("the closed day's human tallies: %+v %v", tallies, err)
		}
		if vs, _ := s.Visitors(ctx, "2026-04-23"); len(vs) != 0 {
			t.Errorf("the closed day keeps %d visitors", len(vs))
		}
		var n int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM portal_salt`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d salts left after the close (%v)", n, err)
		}
		// The new day gets a new salt and counts as usual.
		r.Record(human, Hit{Kind: KindPage})
		if vs := visitors(t, r, s, "2026-04-24"); len(vs) != 1 {
			t.Errorf("the new day's visitors: %+v", vs)
		}
	})
}
