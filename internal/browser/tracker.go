package browser

import (
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// RequestRecord is one network request a tab made (or was refused), as the
// fetcher writes it to crawl_log with tier playwright.
type RequestRecord struct {
	URL          string
	Method       string
	ResourceType string // Chromium's type: Document, Script, XHR, Fetch, Image, ...
	Status       int    // HTTP status; 0 when no response arrived
	Bytes        int64  // bytes on the wire (encodedDataLength), headers included
	Duration     time.Duration
	StartedAt    time.Time
	FromCache    bool

	// BlockedReason says why zhizhi refused the request before Chromium
	// opened any connection (the Allow callback's error or the resource
	// policy). Empty when the request was allowed.
	BlockedReason string

	// Error is Chromium's network error when the request failed
	// (net::ERR_..., including net::ERR_BLOCKED_BY_CLIENT for refusals).
	Error string

	// RetryAfter is the answer's Retry-After header, if it had one: the
	// fetcher obeys it on a 429 or 503 as it does on the direct tier.
	RetryAfter string
}

// reqState is a record while its request is alive. A redirect ends one
// record and starts the next under the same request id.
type reqState struct {
	index int     // into tracker.records
	prev  int     // the previous hop's record when a redirect hop was refused; -1 if none
	t0    float64 // Chromium's monotonic seconds at start
	done  bool
}

// tracker follows one tab's network and page events in the order Chromium
// sent them. Its handle method runs inside chromedp's read loop, so it only
// updates state under a mutex and never sends commands.
type tracker struct {
	mu sync.Mutex

	mainFrame cdp.FrameID
	records   []RequestRecord
	live      map[network.RequestID]*reqState
	inflight  int
	changedAt time.Time // last time inflight changed, for the quiet period

	// The main frame's document: a navigation in flight (docReq), the
	// committed document (docLoader) and whether its load event fired.
	docReq    network.RequestID
	docLoader cdp.LoaderID
	docURL    string // of the committed main document
	docStatus map[cdp.LoaderID]int
	loaded    bool
	loads     int  // committed main documents, to tell a reload happened
	saw412    bool // a main document answered 412 (the challenge status)

	// held maps a request to the host slot it holds (see hostSlots) until
	// Chromium reports the request finished or failed.
	held    map[network.RequestID]string
	release func(host string)
}

func newTracker(release func(host string)) *tracker {
	return &tracker{
		live:      make(map[network.RequestID]*reqState),
		docStatus: make(map[cdp.LoaderID]int),
		held:      make(map[network.RequestID]string),
		release:   release,
		changedAt: time.Now(),
	}
}

func (t *tracker) isMainFrame(id cdp.FrameID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return id != "" && id == t.mainFrame
}

func (t *tracker) setMainFrame(id cdp.FrameID) {
	t.mu.Lock()
	t.mainFrame = id
	t.mu.Unlock()
}

// handle is given to chromedp.WithListener.
func (t *tracker) handle(ev any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		t.requestWillBeSent(ev)
	case *network.EventResponseReceived:
		// A refused request never reached the network; what Chromium
		// reports for it afterwards (its own error page) is no response.
		if s := t.live[ev.RequestID]; s != nil && ev.Response != nil && t.records[s.index].BlockedReason == "" {
			t.records[s.index].Status = int(ev.Response.Status)
			t.records[s.index].RetryAfter = headerValue(ev.Response.Headers, "Retry-After")
			if ev.Response.FromDiskCache || ev.Response.FromServiceWorker {
				t.records[s.index].FromCache = true
			}
		}
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == t.mainFrame && ev.Response != nil {
			t.docStatus[ev.LoaderID] = int(ev.Response.Status)
			if ev.Response.Status == 412 {
				// The challenge script may reload before the page ever
				// counts as loaded; the network still saw it.
				t.saw412 = true
			}
		}
	case *network.EventRequestServedFromCache:
		if s := t.live[ev.RequestID]; s != nil {
			t.records[s.index].FromCache = true
		}
	case *network.EventLoadingFinished:
		if s := t.live[ev.RequestID]; s != nil {
			if t.records[s.index].BlockedReason == "" {
				t.records[s.index].Bytes = int64(ev.EncodedDataLength)
			}
			t.finish(s, float64(ev.Timestamp))
		}
		t.releaseLocked(ev.RequestID)
	case *network.EventLoadingFailed:
		if s := t.live[ev.RequestID]; s != nil {
			r := &t.records[s.index]
			r.Error = ev.ErrorText
			if r.BlockedReason == "" && ev.BlockedReason != "" {
				r.BlockedReason = "chromium: " + string(ev.BlockedReason)
			}
			t.finish(s, float64(ev.Timestamp))
		}
		t.releaseLocked(ev.RequestID)
		if ev.RequestID == t.docReq {
			t.docReq = "" // the navigation failed; the old document stays
		}
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			t.docLoader = ev.Frame.LoaderID
			t.docURL = ev.Frame.URL
			t.docReq = ""
			t.loaded = false
			t.loads++
		}
	case *page.EventLoadEventFired:
		t.loaded = true
	}
}

func (t *tracker) requestWillBeSent(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil {
		return
	}
	if s := t.live[ev.RequestID]; s != nil {
		switch {
		case ev.RedirectResponse != nil && !s.done:
			// The previous hop ends here with its redirect status.
			r := &t.records[s.index]
			r.Status = int(ev.RedirectResponse.Status)
			r.Bytes = int64(ev.RedirectResponse.EncodedDataLength)
			t.finish(s, float64(ev.Timestamp))
		case s.done:
			// Refused at the gate before Chromium announced it: one
			// record is enough. A refused redirect hop still tells us
			// the status of the hop before it.
			if ev.RedirectResponse != nil && s.prev >= 0 && t.records[s.prev].Status == 0 {
				t.records[s.prev].Status = int(ev.RedirectResponse.Status)
				t.records[s.prev].Bytes = int64(ev.RedirectResponse.EncodedDataLength)
			}
			return
		default:
			return
		}
	}
	t.records = append(t.records, RequestRecord{
		URL:          ev.Request.URL,
		Method:       ev.Request.Method,
		ResourceType: string(ev.Type),
		StartedAt:    wallTime(ev.WallTime),
	})
	t.live[ev.RequestID] = &reqState{index: len(t.records) - 1, prev: -1, t0: float64(ev.Timestamp)}
	t.inflight++
	t.changedAt = time.Now()
	if ev.Type == network.ResourceTypeDocument && ev.FrameID == t.mainFrame {
		t.docReq = ev.RequestID
	}
}

func (t *tracker) finish(s *reqState, ts float64) {
	if s.done {
		return
	}
	s.done = true
	if ts > s.t0 && s.t0 > 0 {
		t.records[s.index].Duration = time.Duration((ts - s.t0) * float64(time.Second))
	}
	t.inflight--
	t.changedAt = time.Now()
}

// refuse records a request zhizhi failed at the gate. Chromium may or may
// not announce it on the Network domain, before or after; either way it
// stays one record carrying the reason. A redirect keeps its request id, so
// a refused hop gets a record of its own after the hop that redirected.
func (t *tracker) refuse(id network.RequestID, url, method, resourceType, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(id)
	prev := -1
	if s := t.live[id]; id != "" && s != nil {
		if t.records[s.index].URL == url && t.records[s.index].BlockedReason == "" {
			t.records[s.index].BlockedReason = reason
			t.finish(s, 0)
			return
		}
		prev = s.index
		t.finish(s, 0)
	}
	t.records = append(t.records, RequestRecord{
		URL:           url,
		Method:        method,
		ResourceType:  resourceType,
		StartedAt:     time.Now(),
		BlockedReason: reason,
	})
	if id != "" {
		t.live[id] = &reqState{index: len(t.records) - 1, prev: prev, done: true}
	}
	t.changedAt = time.Now()
}

// hold marks a request the gate is still deciding on (or waiting to send) as
// network activity, so the page is not taken for quiet meanwhile.
func (t *tracker) hold() {
	t.mu.Lock()
	t.inflight++
	t.changedAt = time.Now()
	t.mu.Unlock()
}

func (t *tracker) unhold() {
	t.mu.Lock()
	t.inflight--
	t.changedAt = time.Now()
	t.mu.Unlock()
}

// heldHost is the host whose slot request id already holds, or "".
func (t *tracker) heldHost(id network.RequestID) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[id]
}

// setHeld records that request id holds host's slot, releasing the slot of
// another host it held for an earlier redirect hop.
func (t *tracker) setHeld(id network.RequestID, host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.held[id]; ok && old != host {
		t.releaseLocked(id)
	}
	t.held[id] = host
}

func (t *tracker) releaseLocked(id network.RequestID) {
	if host, ok := t.held[id]; ok {
		delete(t.held, id)
		if t.release != nil {
			t.release(host)
		}
	}
}

// releaseAll frees every slot still held when the tab closes: requests cut
// short send no finishing event.
func (t *tracker) releaseAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.held {
		t.releaseLocked(id)
	}
}

// docState is what the render loop needs to decide whether the page is
// ready.
type docState struct {
	navigating bool // a main-frame navigation is in flight (e.g. the reload)
	committed  bool // some document from our navigation is committed
	loaded     bool // its load event fired
	status     int  // its HTTP status
	loads      int
	saw412     bool
	inflight   int
	quietFor   time.Duration
}

func (t *tracker) state() docState {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := docState{
		navigating: t.docReq != "",
		committed:  t.docLoader != "",
		loaded:     t.loaded,
		status:     t.docStatus[t.docLoader],
		loads:      t.loads,
		saw412:     t.saw412,
		inflight:   t.inflight,
	}
	if t.inflight == 0 {
		d.quietFor = time.Since(t.changedAt)
	}
	return d
}

// onWire counts the requests sent or being decided that have not ended.
func (t *tracker) onWire() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inflight
}

// blank tells whether the tab shows about:blank with no navigation of its
// main frame in flight: nothing left to run or to ask for.
func (t *tracker) blank() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.docURL == "about:blank" && t.docReq == ""
}

// blockedReasonFor returns the gate's reason for the first refused request
// to rawURL, for the error of a refused main document.
func (t *tracker) blockedReasonFor(rawURL string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.records {
		if r.URL == rawURL && r.BlockedReason != "" {
			return r.BlockedReason
		}
	}
	return ""
}

// snapshot copies the records; requests still open are marked so the log
// does not mistake them for finished ones.
func (t *tracker) snapshot() []RequestRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]RequestRecord, len(t.records))
	copy(out, t.records)
	for _, s := range t.live {
		if !s.done && out[s.index].Error == "" {
			out[s.index].Error = "unfinished when the tab closed"
		}
	}
	return out
}

func wallTime(t cdp.TimeSinceEpoch) time.Time {
	if t <= 0 {
		return time.Now()
	}
	sec := float64(t)
	return time.Unix(0, int64(sec*float64(time.Second)))
}

// releaseID frees the slot request id holds, if any.
func (t *tracker) releaseID(id network.RequestID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(id)
}

// headerValue returns the header name of a CDP header map (whose keys come
// in whatever case the server used), or "".
func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return ""
}
