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
// Accept-Encoding: gzip.
func serve(w http.ResponseWriter, r *http.Request, res *resource) {
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
		_, _ = w.Write(body)
	}
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
