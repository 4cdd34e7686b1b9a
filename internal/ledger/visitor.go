package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"zhizhi/internal/store"
)

// Kind is what a portal request was, as BotScore counts it.
type Kind int

const (
	KindOther  Kind = iota // robots.txt, a missing page: counted as a request only
	KindPage               // an HTML page; with a card id, a view of that card
	KindAsset              // a static file: style sheet, script, image
	KindDoor               // a click-through at /go/{card}
	KindBeacon             // a batch of interaction events from the page script
)

// Hit is one portal request as the recorder keeps it.
type Hit struct {
	Kind   Kind
	CardID int64               // KindPage of a card page, KindDoor
	Events store.VisitorEvents // KindBeacon
	// Token is what a beacon presents: the BeaconToken its page carried.
	// A beacon without the right one is not counted as events.
	Token string
}

// MaxEventsPerBeacon caps each event count of one beacon: a page script
// reports every few seconds, so more is a forged batch, not a reader.
const MaxEventsPerBeacon = 10000

// maxPending bounds the hits held while the database is unreachable.
const maxPending = 100_000

// Defaults of RecorderOptions.
const (
	DefaultFlushEvery = time.Second
	// DefaultGrace is how long after midnight (Asia/Shanghai) a day stays
	// open, so hits buffered in the last second still count.
	DefaultGrace = 5 * time.Minute
)

// RecorderOptions are the recorder's settings; zero values take defaults.
type RecorderOptions struct {
	Now        func() time.Time
	Log        *slog.Logger
	FlushEvery time.Duration
	Grace      time.Duration
	// ClientIP gives the address a request came from; default: the peer
	// address. Behind a reverse proxy, give one that reads the proxy's
	// header. The address only goes into the visitor key; it is never kept.
	ClientIP func(r *http.Request) string
}

// Recorder counts portal traffic per visitor and day. Record is cheap (an
// HMAC and an append under a lock); a background loop writes the buffered
// hits every second, one transaction per flush, and closes finished days.
// Close writes what is left: nothing is lost on a clean shutdown.
type Recorder struct {
	store      *store.Store
	now        func() time.Time
	log        *slog.Logger
	flushEvery time.Duration
	grace      time.Duration
	clientIP   func(r *http.Request) string
	loc        *time.Location

	saltMu sync.Mutex
	salts  map[string][]byte // by day

	mu      sync.Mutex
	pending []pendingHit
	closed  bool
	dropped int

	flushMu sync.Mutex // one flush at a time, so a visitor's hits stay in order

	stop chan struct{}
	done chan struct{}
}

type pendingHit struct {
	day, key, uaClass string
	at                time.Time
	hit               Hit
}

// NewRecorder starts a recorder writing to s; stop it with Close.
func NewRecorder(s *store.Store, o RecorderOptions) *Recorder {
	r := &Recorder{store: s, now: o.Now, log: o.Log, flushEvery: o.FlushEvery, grace: o.Grace,
		clientIP: o.ClientIP, loc: shanghai, salts: map[string][]byte{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.flushEvery <= 0 {
		r.flushEvery = DefaultFlushEvery
	}
	if r.grace <= 0 {
		r.grace = DefaultGrace
	}
	if r.clientIP == nil {
		r.clientIP = peerAddress
	}
	go r.loop()
	return r
}

// peerAddress is the peer's IP, never a forwarded header (anyone can write
// one). An IPv6 client counts by its /64: a host picks privacy addresses
// from its whole /64, and one reader should stay one visitor.
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return visitorAddress(host)
}

// visitorAddress is an address as a visitor counts it: an IPv6 address by
// its /64.
func visitorAddress(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String()
	}
	return host
}

// ProxiedAddress reads the visitor's address from header (X-Real-IP, or
// X-Forwarded-For, whose last address is the one the proxy added) — but
// only on a request that came from a proxy on this machine or the private
// network; any other request could have written the header itself, and
// counts by its peer address.
func ProxiedAddress(header string) func(r *http.Request) string {
	return func(r *http.Request) string {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		peer := visitorAddress(host)
		if ip := net.ParseIP(host); ip == nil || !(ip.IsLoopback() || ip.IsPrivate()) {
			return peer
		}
		v := r.Header.Values(header)
		if len(v) == 0 {
			return peer
		}
		parts := strings.Split(v[len(v)-1], ",")
		addr := strings.TrimSpace(parts[len(parts)-1])
		if net.ParseIP(addr) == nil {
			return peer
		}
		return visitorAddress(addr)
	}
}

// Day is the portal day (Asia/Shanghai calendar date) of a moment.
func (r *Recorder) Day(t time.Time) string { return t.In(r.loc).Format(time.DateOnly) }

// Record counts one request. It never fails the request: a hit that cannot
// be keyed (the database unreachable for the day's salt) is logged and
// dropped.
func (r *Recorder) Record(req *http.Request, h Hit) {
	at := r.now()
	day := r.Day(at)
	ua := req.UserAgent()
	salt, err := r.salt(context.WithoutCancel(req.Context()), day)
	if err != nil {
		r.log.Warn("portal visit not counted", "day", day, "err", err)
		return
	}
	key := visitorKey(salt, r.clientIP(req), ua)
	if h.Kind == KindBeacon && !hmac.Equal([]byte(h.Token), []byte(beaconToken(salt, key))) {
		// Events only count from a page this visitor was served: a script
		// that only fetches pages never presents the page's token.
		h = Hit{Kind: KindOther}
	}
	p := pendingHit{day: day, key: key, uaClass: ClassifyUA(ua), at: at, hit: h}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		// After Close there is no loop left to flush: write at once.
		if err := r.apply(context.WithoutCancel(req.Context()), []pendingHit{p}); err != nil {
			r.log.Warn("portal visit not counted", "day", day, "err", err)
		}
		return
	}
	if len(r.pending) >= maxPending {
		r.dropped++
	} else {
		r.pending = append(r.pending, p)
	}
	r.mu.Unlock()
}

// BeaconToken is the proof a page hands its script to return with each
// beacon: HMAC-SHA256(day salt, "beacon" ‖ NUL ‖ visitor key), so it is
// good for the visitor (address and user agent) and day it was served to
// and cannot be made without the salt. "" when the salt cannot be read.
func (r *Recorder) BeaconToken(req *http.Request) string {
	salt, err := r.salt(context.WithoutCancel(req.Context()), r.Day(r.now()))
	if err != nil {
		return ""
	}
	return beaconToken(salt, visitorKey(salt, r.clientIP(req), req.UserAgent()))
}

func beaconToken(salt []byte, key string) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte("beacon"))
	m.Write([]byte{0})
	m.Write([]byte(key))
	return hex.EncodeToString(m.Sum(nil))
}

// visitorKey is HMAC-SHA256(salt, address ‖ NUL ‖ user agent) in hex. The
// NUL keeps ("1.2.3.4", "5x") and ("1.2.3.45", "x") apart.
func visitorKey(salt []byte, addr, ua string) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte(addr))
	m.Write([]byte{0})
	m.Write([]byte(ua))
	return hex.EncodeToString(m.Sum(nil))
}

// salt returns the day's salt, drawing and storing one for a new day; the
// store keeps the first one drawn, so all processes agree.
func (r *Recorder) salt(ctx context.Context, day string) ([]byte, error) {
	r.saltMu.Lock()
	defer r.saltMu.Unlock()
	if s, ok := r.salts[day]; ok {
		return s, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("draw salt: %w", err)
	}
	s, err := r.store.PortalSalt(ctx, day, fresh)
	if err != nil {
		return nil, err
	}
	// Only today's and yesterday's salts are ever asked for.
	for d := range r.salts {
		if d < r.Day(r.now().Add(-48*time.Hour)) {
			delete(r.salts, d)
		}
	}
	r.salts[day] = s
	return s, nil
}

func (r *Recorder) loop() {
	defer close(r.done)
	tick := time.NewTicker(r.flushEvery)
	defer tick.Stop()
	var lastClose time.Time
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		ctx := context.Background()
		if err := r.Flush(ctx); err != nil {
			r.log.Error("portal visits", "err", err)
		}
		if now := r.now(); now.Sub(lastClose) >= time.Minute || now.Before(lastClose) {
			lastClose = now
			if _, err := r.CloseDays(ctx); err != nil {
				r.log.Error("close portal days", "err", err)
			}
		}
	}
}

// Flush writes the buffered hits. On failure they stay buffered for the
// next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Error("portal visits dropped: the buffer was full", "hits", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := r.apply(ctx, batch); err != nil {
		r.mu.Lock()
		if len(r.pending)+len(batch) <= maxPending {
			r.pending = append(batch, r.pending...)
		} else {
			r.dropped += len(batch)
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

// apply writes hits, grouped per visitor in the order they came.
func (r *Recorder) apply(ctx context.Context, hits []pendingHit) error {
	type vk struct{ day, key string }
	groups := map[vk][]pendingHit{}
	var order []vk
	for _, p := range hits {
		k := vk{p.day, p.key}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	ups := make([]store.VisitorUpdate, 0, len(order))
	for _, k := range order {
		g := groups[k]
		ups = append(ups, store.VisitorUpdate{Day: k.day, Key: k.key, UAClass: g[0].uaClass,
			Apply: func(v *store.VisitorDay) []store.CardCount { return applyHits(v, g) }})
	}
	dropped, err := r.store.ApplyVisits(ctx, ups)
	if err != nil {
		return err
	}
	if dropped > 0 {
		r.log.Warn("portal visits for a closed day not counted", "visitors", dropped)
	}
	return nil
}

// applyHits adds a visitor's hits to its day and scores the result.
func applyHits(v *store.VisitorDay, hits []pendingHit) []store.CardCount {
	cards := map[int64]*store.CardCount{}
	var order []int64
	card := func(id int64) *store.CardCount {
		c, ok := cards[id]
		if !ok {
			c = &store.CardCount{CardID: id}
			cards[id] = c
			order = append(order, id)
		}
		return c
	}
	for _, p := range hits {
		v.Requests++
		switch p.hit.Kind {
		case KindAsset:
			v.Assets++
		case KindPage:
			v.Pages++
			navigate(v, p.at)
			if p.hit.CardID > 0 {
				card(p.hit.CardID).Views++
			}
		case KindDoor:
			v.Clicks++
			navigate(v, p.at)
			if p.hit.CardID > 0 {
				card(p.hit.CardID).Clicks++
			}
		case KindBeacon:
			e := p.hit.Events
			v.Events.Scroll += clampEvents(e.Scroll)
			v.Events.Pointer += clampEvents(e.Pointer)
			v.Events.Key += clampEvents(e.Key)
			v.Events.Click += clampEvents(e.Click)
			v.Events.Visibility += clampEvents(e.Visibility)
		}
	}
	v.Score = Score(FeaturesOf(v))
	v.Band = BandOf(v)
	out := make([]store.CardCount, 0, len(order))
	for _, id := range order {
		out = append(out, *cards[id])
	}
	return out
}

func clampEvents(n int64) int64 { return min(max(n, 0), MaxEventsPerBeacon) }

// navigate adds the gap since the visitor's previous navigation to the
// running statistics (Welford) and counts it as a sleep window when it is
// long enough. Hits of several processes may arrive out of order: a
// negative gap counts as none.
func navigate(v *store.VisitorDay, at time.Time) {
	v.Navigations++
	if v.LastNavAt != nil {
		gap := max(at.Sub(*v.LastNavAt).Seconds(), 0)
		v.GapCount++
		d := gap - v.GapMean
		v.GapMean += d / float64(v.GapCount)
		v.GapM2 += d * (gap - v.GapMean)
		if gap >= SleepWindowSeconds {
			v.SleepWindows++
		}
		if at.Before(*v.LastNavAt) {
			return
		}
	}
	t := at
	v.LastNavAt = &t
}

// CloseDays closes every portal day that ended (midnight, Asia/Shanghai)
// at least the grace period ago: its tallies are taken and its salt,
// visitors and per-card detail deleted. It returns the days it closed.
func (r *Recorder) CloseDays(ctx context.Context) ([]string, error) {
	if err := r.Flush(ctx); err != nil {
		return nil, err
	}
	if n, err := r.store.SweepClosedPortalDays(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		r.log.Warn("portal visits for a closed day arrived after its close and were deleted", "rows", n)
	}
	days, err := r.store.OpenPortalDays(ctx)
	if err != nil {
		return nil, err
	}
	now := r.now()
	var closed []string
	for _, day := range days {
		start, err := time.ParseInLocation(time.DateOnly, day, r.loc)
		if err != nil {
			return closed, fmt.Errorf("portal day %q: %w", day, err)
		}
		if now.Before(start.AddDate(0, 0, 1).Add(r.grace)) {
			continue
		}
		ok, err := r.store.ClosePortalDay(ctx, day)
		if err != nil {
			return closed, err
		}
		r.saltMu.Lock()
		delete(r.salts, day)
		r.saltMu.Unlock()
		if ok {
			closed = append(closed, day)
		}
	}
	return closed, nil
}

// Close stops the background loop and writes every buffered hit; hits
// recorded afterwards are written at once.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	if err := r.Flush(context.Background()); err != nil {
		return fmt.Errorf("portal visits at shutdown: %w", err)
	}
	return nil
}
