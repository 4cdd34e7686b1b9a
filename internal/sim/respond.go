package sim

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// resource is one rendered response body with what the HTTP layer needs to
// answer conditional requests about it.
type resource struct {
	status int // 0 means 200
	ctype  string
	body   []byte
	mod    time.Time // zero: no Last-Modified
}

// etagOf is a strong validator from the content hash.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// serve writes res honouring If-None-Match / If-Modified-Since, HEAD and
// Accept-Encoding: gzip; a Range header is ignored, as a page built per
// request ignores it.
func serve(w http.ResponseWriter, r *http.Request, res *resource) { serveFile(w, r, res, false) }

// serveFile is serve; with ranges it answers a Range request as nginx
// serves a static file (see serveRange).
func serveFile(w http.ResponseWriter, r *http.Request, res *resource, ranges bool) {
	status := res.status
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	etag := etagOf(res.body)
	zip := acceptsGzip(r) && len(res.body) > 0
	if zip {
		// A gzip representation is a different strong entity; the suffix keeps
		// the validator strong while If-None-Match still matches either form.
		etag = etag[:len(etag)-1] + `-gz"`
	}
	if status == http.StatusOK {
		h.Set("ETag", etag)
		if !res.mod.IsZero() {
			h.Set("Last-Modified", res.mod.UTC().Format(http.TimeFormat))
		}
		if notModified(r, etag, res.mod) {
			h.Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if ranges && status == http.StatusOK && !zip {
		h.Set("Accept-Ranges", "bytes")
		h.Set("Vary", "Accept-Encoding")
		if serveRange(w, r, res, etag) {
			return
		}
	}
	body := res.body
	if zip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Vary", "Accept-Encoding")
	if res.ctype != "" {
		h.Set("Content-Type", res.ctype)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		if n, _ := w.Write(body); zip && n == len(body) {
			if lw, ok := w.(*logWriter); ok {
				lw.content = int64(len(res.body))
			}
		}
	}
}

// serveRange answers a Range request for res the way nginx serves a static
// file, awkward parts included, and reports whether it did; false means
// the whole body goes out as a 200:
//   - only "bytes=" ranges; a header it cannot parse is ignored;
//   - one range only (nginx's max_ranges 1): several are ignored;
//   - an If-Range that does not match the ETag or Last-Modified means the
//     whole body;
//   - "first-last" is clamped to the end, "first-" runs to the end, "-n" is
//     the last n bytes; a range that starts past the end is 416 with
//     Content-Range "bytes */length";
//   - a range covering the whole file is still a 206;
//   - nginx drops ranges when it compresses on the fly (gzip on), so the
//     caller offers ranges only for an uncompressed answer: a client that
//     wants a head asks for identity.
//
// Validators are checked before (a 304 wins over a range), as nginx does.
func serveRange(w http.ResponseWriter, r *http.Request, res *resource, etag string) bool {
	spec := r.Header.Get("Range")
	if spec == "" {
		return false
	}
	if ir := r.Header.Get("If-Range"); ir != "" {
		if strings.HasPrefix(ir, `"`) || strings.HasPrefix(ir, "W/") {
			if ir != etag {
				return false
			}
		} else if t, err := http.ParseTime(ir); err != nil || res.mod.IsZero() || !res.mod.Truncate(time.Second).Equal(t) {
			return false
		}
	}
	unit, set, ok := strings.Cut(spec, "=")
	if !ok || strings.TrimSpace(unit) != "bytes" || strings.Contains(set, ",") {
		return false
	}
	size := int64(len(res.body))
	first, last, ok := strings.Cut(strings.TrimSpace(set), "-")
	if !ok {
		return false
	}
	var from, to int64
	switch {
	case first == "":
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return false
		}
		from, to = max(size-n, 0), size-1
	default:
		f, err := strconv.ParseInt(first, 10, 64)
		if err != nil || f < 0 {
			return false
		}
		from, to = f, size-1
		if last != "" {
			l, err := strconv.ParseInt(last, 10, 64)
			if err != nil || l < f {
				return false
			}
			to = min(l, size-1)
		}
	}
	h := w.Header()
	if from >= size || to < from {
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		h.Del("Content-Type")
		h.Set("Content-Length", "0")
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return true
	}
	if res.ctype != "" {
		h.Set("Content-Type", res.ctype)
	}
	h.Set("Content-Range", "bytes "+strconv.FormatInt(from, 10)+"-"+strconv.FormatInt(to, 10)+"/"+strconv.FormatInt(size, 10))
	h.Set("Content-Length", strconv.FormatInt(to-from+1, 10))
	w.WriteHeader(http.StatusPartialContent)
	if r.Method != http.MethodHead {
		_, _ = w.Write(res.body[from : to+1])
	}
	return true
}

// notModified applies RFC 9110 §13.2.2: If-None-Match wins over
// If-Modified-Since; weak comparison for If-None-Match.
func notModified(r *http.Request, etag string, mod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		base := strings.TrimSuffix(strings.TrimSuffix(etag, `"`), "-gz")
		for _, tag := range strings.Split(inm, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" {
				return true
			}
			if strings.TrimSuffix(strings.TrimSuffix(tag, `"`), "-gz") == base {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !mod.IsZero() {
		t, err := http.ParseTime(ims)
		if err != nil {
			return false
		}
		return !mod.Truncate(time.Second).After(t)
	}
	return false
}

// acceptsGzip reports whether the request accepts gzip (q=0 refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// text is a small uncached response (errors, robots faults).
func text(w http.ResponseWriter, r *http.Request, status int, ctype, body string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	text(w, r, http.StatusNotFound, "text/html; charset=utf-8",
		"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>404</title></head><body><h1>404 页面不存在</h1></body></html>")
}
