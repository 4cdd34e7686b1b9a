package sim

import (
	"net/http"
	"strings"
	"sync"
)

// siteHandler wraps a site's routes with the access log, faults and, on the
// city portal, the cookie challenge, in the order a real edge applies them.
func (w *World) siteHandler(s *site) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		arrived := w.opts.Clock()
		counter := w.inflight[s.Host]
		others := counter.Add(1) - 1
		othersAll := w.inflightAll.Add(1) - 1
		// A request stops counting as in flight just before the last byte
		// of its declared body is handed to the connection (or when the
		// handler returns, whichever is first): once the client can hold
		// the whole answer it may rightly send its next request, perhaps
		// before this goroutine runs again. From then until its entry is
		// written the request is owed to the log, so that whoever reads
		// the log after the client got its answer finds it there.
		var once sync.Once
		var owes, recorded bool
		finish := func() {
			once.Do(func() {
				if !recorded {
					owes = true
					w.owe()
				}
				counter.Add(-1)
				w.inflightAll.Add(-1)
			})
		}
		defer finish()
		lw := &logWriter{ResponseWriter: rw, done: w.done, ctxDone: r.Context().Done(), finish: finish, content: -1}
		acc := Access{
			Host: s.Host, Method: r.Method, Path: r.URL.RequestURI(), UserAgent: r.UserAgent(),
			Arrived: arrived, InFlightAtArrival: int(others), InFlightAllAtArrival: int(othersAll),
			Cookie: hasCookie(r),
		}
		if s.Challenge {
			acc.Cleared = w.cleared(r)
		}
		defer func() {
			acc.Status = lw.status
			if acc.Status == 0 {
				acc.Status = http.StatusOK
			}
			acc.Bytes, acc.ContentBytes = lw.bytes, lw.bytes
			if lw.content >= 0 {
				acc.ContentBytes = lw.content
			}
			acc.Finished = w.opts.Clock()
			recorded = true
			w.record(acc, owes)
		}()
		if f := w.takeFault(s.Host, r.URL.Path); f != nil {
			acc.Fault = f.Kind
			if w.applyFault(lw, r, f) {
				if f.Kind == FaultHang && lw.status == 0 {
					// The client gave up: nothing was ever written.
					lw.status = 499
				}
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			lw.Header().Set("Allow", "GET, HEAD")
			text(lw, r, http.StatusMethodNotAllowed, "text/plain; charset=utf-8", "method not allowed\n")
			return
		}
		if r.URL.Path == "/robots.txt" {
			serve(lw, r, w.robots(s))
			return
		}
		if s.Challenge && !acc.Cleared {
			w.serveChallenge(lw, r)
			return
		}
		res := w.render(s, r)
		if res == nil {
			notFound(lw, r)
			return
		}
		if lw.charsetLie {
			res = lyingCharset(res)
		}
		serveFile(lw, r, res, s.StaticFiles && !lw.noRange)
	})
}

// render returns the resource at r's path, or nil.
func (w *World) render(s *site, r *http.Request) *resource {
	w.mu.RLock()
	defer w.mu.RUnlock()
	path := r.URL.Path
	if f, ok := s.attachments[path]; ok {
		return fileResource(f, w.opts.Now)
	}
	if a, ok := s.byPath[path]; ok {
		return w.renderDetail(s, a)
	}
	switch s.Kind {
	case kindGkmlpt:
		return w.routeGkmlpt(s, r)
	default:
		return w.routeTemplate(s, r)
	}
}

// robots renders robots.txt: the site's own rules, or a tightened file while
// the robots_tighten fault is on.
func (w *World) robots(s *site) *resource {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	if p, ok := w.robotsTightened(s.Host); ok {
		b.WriteString("Disallow: " + p + "\n")
	} else {
		for _, d := range s.Disallow {
			b.WriteString("Disallow: " + d + "\n")
		}
		if len(s.Disallow) == 0 {
			b.WriteString("Allow: /\n")
		}
	}
	return &resource{ctype: "text/plain; charset=utf-8", body: []byte(b.String())}
}

// robotsDisallowed reports whether path is disallowed by the robots.txt s
// currently serves (all rules are for every agent and plain prefixes).
func (w *World) robotsDisallowed(s *site, path string) bool {
	if p, ok := w.robotsTightened(s.Host); ok {
		return strings.HasPrefix(path, p)
	}
	for _, d := range s.Disallow {
		if strings.HasPrefix(path, d) {
			return true
		}
	}
	return false
}
