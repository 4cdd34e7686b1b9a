package sim

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Access is one request as the site saw it. Tests use the log to prove
// politeness from the site's side.
type Access struct {
	Host   string `json:"host"`
	Method string `json:"method"`
	Path   string `json:"path"` // path and query as requested
	Status int    `json:"status"`
	Bytes  int64  `json:"bytes"` // body bytes written (after compression)
	// ContentBytes is how much of the page's own content the body carried,
	// counted before compression: a gzip answer with a whole page carries
	// all of it in fewer Bytes; a 206 carries its range.
	ContentBytes int64     `json:"content_bytes"`
	UserAgent    string    `json:"user_agent"`
	Arrived      time.Time `json:"arrived"`  // Options.Clock, the wall clock by default
	Finished     time.Time `json:"finished"` // Options.Clock, the wall clock by default
	// InFlightAtArrival counts the OTHER requests in flight at this host when
	// this one arrived: 0 is the polite value.
	InFlightAtArrival int `json:"in_flight_at_arrival"`
	// InFlightAllAtArrival counts the OTHER requests in flight at all site
	// hosts together when this one arrived: at most 3 is the polite value
	// (zhizhi keeps at most 4 in flight overall).
	InFlightAllAtArrival int    `json:"in_flight_all_at_arrival"`
	Cookie               bool   `json:"cookie"`  // the request carried a Cookie header
	Cleared              bool   `json:"cleared"` // it carried a valid clearance cookie
	Fault                string `json:"fault,omitempty"`
}

// logWriter records status and body bytes of a response.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// content is the uncompressed length of what was written, when it
	// was compressed (-1: not compressed, content is bytes).
	content int64
	// slowBPS, when set, throttles the body (the "slow" fault).
	slowBPS int
	// charsetLie mislabels the page's charset (the "charset_lie" fault).
	charsetLie bool
	// noRange ignores Range on a static site (the "no_range" fault).
	noRange bool
	done    <-chan struct{}
	ctxDone <-chan struct{}
	// finish ends the request's in-flight count; called before the write
	// that completes the declared Content-Length.
	finish func()
	// declared is the Content-Length sent, -1 when none (read at the
	// first write).
	declared int64
	seenHdr  bool
}

// beforeWrite calls finish when writing n more bytes completes the body.
func (lw *logWriter) beforeWrite(n int) {
	if !lw.seenHdr {
		lw.seenHdr = true
		lw.declared = -1
		if v, err := strconv.ParseInt(lw.Header().Get("Content-Length"), 10, 64); err == nil {
			lw.declared = v
		}
	}
	if lw.finish != nil && lw.declared >= 0 && lw.bytes+int64(n) >= lw.declared {
		lw.finish()
	}
}

func (lw *logWriter) WriteHeader(code int) {
	if lw.status == 0 {
		lw.status = code
	}
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *logWriter) Write(p []byte) (int, error) {
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	if lw.slowBPS > 0 {
		return lw.writeSlow(p)
	}
	lw.beforeWrite(len(p))
	n, err := lw.ResponseWriter.Write(p)
	lw.bytes += int64(n)
	return n, err
}

// writeSlow trickles p out at slowBPS bytes per second in tenth-second chunks.
func (lw *logWriter) writeSlow(p []byte) (int, error) {
	chunk := max(1, lw.slowBPS/10)
	written := 0
	for len(p) > 0 {
		n := min(chunk, len(p))
		lw.beforeWrite(n)
		m, err := lw.ResponseWriter.Write(p[:n])
		lw.bytes += int64(m)
		written += m
		if err != nil {
			return written, err
		}
		if f, ok := lw.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[n:]
		if len(p) == 0 {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-lw.done:
			return written, http.ErrHandlerTimeout
		case <-lw.ctxDone:
			return written, http.ErrHandlerTimeout
		}
	}
	return written, nil
}

func (lw *logWriter) Flush() {
	if f, ok := lw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// owe notes an answer handed to its client before its entry is written.
func (w *World) owe() {
	w.logMu.Lock()
	w.owed++
	w.logMu.Unlock()
}

// record writes a's entry; owed says whether owe was called for it.
func (w *World) record(a Access, owed bool) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.logs[a.Host] = append(w.logs[a.Host], a)
	if owed {
		w.owed--
		w.logged.Broadcast()
	}
}

// settleLocked waits, with logMu held, until every answer a client may
// already hold is in the log: a test that reads the log right after its
// last response must see that request, however busy the machine is.
func (w *World) settleLocked() {
	for w.owed > 0 {
		w.logged.Wait()
	}
}

// AccessLog returns the requests host has received, in arrival order:
// every request whose answer has reached its client, and those answered
// earlier still.
func (w *World) AccessLog(host string) []Access {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.settleLocked()
	out := append([]Access(nil), w.logs[host]...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Arrived.Before(out[j].Arrived) })
	return out
}

// AllAccess returns every site's requests in arrival order.
func (w *World) AllAccess() []Access {
	w.logMu.Lock()
	w.settleLocked()
	var out []Access
	for _, h := range w.siteHosts() {
		out = append(out, w.logs[h]...)
	}
	w.logMu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Arrived.Before(out[j].Arrived) })
	return out
}

// ResetLog forgets every recorded request.
func (w *World) ResetLog() {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.settleLocked() // an answer already delivered belongs to the old log
	w.logs = map[string][]Access{}
}

func hasCookie(r *http.Request) bool { return strings.TrimSpace(r.Header.Get("Cookie")) != "" }

// InFlight counts the requests host is answering right now (a request
// stops counting just before the last byte of its answer is written), so
// a test can act while one is in flight.
func (w *World) InFlight(host string) int {
	if c := w.inflight[host]; c != nil {
		return int(c.Load())
	}
	return 0
}
