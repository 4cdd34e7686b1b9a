package sim

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Fault kinds.
const (
	Fault429           = "429"            // 429 with Retry-After
	Fault503           = "503"            // 503 (Retry-After if set)
	FaultHang          = "hang"           // never answers until the client gives up or Close
	FaultSlow          = "slow"           // the normal response at BytesPerSec
	FaultHuge          = "huge"           // a 50 MB body, streamed
	FaultGzipBomb      = "gzipbomb"       // ~2 MB of gzip that inflates to 2 GiB
	FaultRedirectLoop  = "redirect_loop"  // 302 between two URLs forever
	FaultRedirect      = "redirect"       // 302 to Location
	FaultRobots500     = "robots_500"     // robots.txt answers 500
	FaultRobotsTighten = "robots_tighten" // robots.txt disallows Path (default "/")
	FaultCaptcha       = "captcha"        // a CAPTCHA page instead of content
	// FaultChallenge answers the cookie challenge (412) even to a valid
	// clearance: a shield no browser passes, so the fetcher's give-up path
	// can be tested. Like the real shield it spares /robots.txt.
	FaultChallenge = "challenge"
	// FaultCharsetLie serves the normal page under a Content-Type naming
	// the other charset: a UTF-8 page says gbk, a GB18030 page utf-8 (a
	// server default or a template copied from another CMS). The <meta>
	// in the page is left as it was.
	FaultCharsetLie = "charset_lie"
	// FaultNoRange makes a site whose pages are static files answer a
	// Range request with the whole page (200), as a dynamic page does: a
	// client that wants only a head must hang up once it has it.
	FaultNoRange = "no_range"
)

var faultKinds = []string{Fault429, Fault503, FaultHang, FaultSlow, FaultHuge, FaultGzipBomb,
	FaultRedirectLoop, FaultRedirect, FaultRobots500, FaultRobotsTighten, FaultCaptcha, FaultChallenge, FaultCharsetLie, FaultNoRange}

// HugeSize is the body length of the huge fault.
const HugeSize = 50 << 20

// GzipBombSize is what the gzip bomb inflates to.
const GzipBombSize = 2 << 30

// CaptchaMarker is in every CAPTCHA page and never in a challenge page.
const CaptchaMarker = `<div id="captcha">请输入验证码</div>`

// Fault is a misbehaviour injected on one host.
type Fault struct {
	Kind string `json:"kind"`
	// PathPrefix limits the fault to paths starting with it; empty: every
	// path. robots_* faults only ever affect /robots.txt.
	PathPrefix string `json:"path_prefix,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"` // 429, 503
	// Count > 0 applies the fault to the next Count matching requests only;
	// 0 keeps it until cleared. robots_tighten ignores it.
	Count       int    `json:"count,omitempty"`
	BytesPerSec int    `json:"bytes_per_sec,omitempty"` // slow; default 200
	Location    string `json:"location,omitempty"`      // redirect
	Path        string `json:"path,omitempty"`          // robots_tighten: disallowed path, default "/"
}

func (f Fault) validate() error {
	found := false
	for _, k := range faultKinds {
		found = found || k == f.Kind
	}
	if !found {
		return fmt.Errorf("unknown fault kind %q (want one of %s)", f.Kind, strings.Join(faultKinds, ", "))
	}
	if f.Kind == FaultRedirect && f.Location == "" {
		return fmt.Errorf("fault redirect needs a location")
	}
	return nil
}

// SetFault adds a fault on host; faults stack, the first matching one wins.
func (w *World) SetFault(host string, f Fault) error {
	if _, ok := w.byHost[host]; !ok {
		return fmt.Errorf("set fault: unknown host %q", host)
	}
	if err := f.validate(); err != nil {
		return fmt.Errorf("set fault on %s: %w", host, err)
	}
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	w.faults[host] = append(w.faults[host], &f)
	return nil
}

// ClearFaults removes every fault on host ("" clears all hosts).
func (w *World) ClearFaults(host string) {
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	if host == "" {
		w.faults = map[string][]*Fault{}
		return
	}
	delete(w.faults, host)
}

// Faults returns the active faults per host.
func (w *World) Faults() map[string][]Fault {
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	out := map[string][]Fault{}
	for h, fs := range w.faults {
		for _, f := range fs {
			out[h] = append(out[h], *f)
		}
	}
	return out
}

// takeFault returns the fault that applies to this request, consuming one
// use of a counted fault.
func (w *World) takeFault(host, path string) *Fault {
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	fs := w.faults[host]
	for i, f := range fs {
		robotsKind := f.Kind == FaultRobots500 || f.Kind == FaultRobotsTighten
		if robotsKind && path != "/robots.txt" {
			continue
		}
		if f.Kind == FaultChallenge && path == "/robots.txt" {
			continue
		}
		if !strings.HasPrefix(path, f.PathPrefix) {
			continue
		}
		got := *f
		if f.Count > 0 && f.Kind != FaultRobotsTighten {
			f.Count--
			if f.Count == 0 {
				w.faults[host] = append(fs[:i:i], fs[i+1:]...)
			}
		}
		return &got
	}
	return nil
}

// robotsTightened returns the path a robots_tighten fault disallows, if any.
func (w *World) robotsTightened(host string) (string, bool) {
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	for _, f := range w.faults[host] {
		if f.Kind == FaultRobotsTighten {
			if f.Path == "" {
				return "/", true
			}
			return f.Path, true
		}
	}
	return "", false
}

// applyFault answers r with fault f. It reports false when the fault only
// modifies the normal response (slow, robots_tighten, charset_lie) and
// serving goes on.
func (w *World) applyFault(lw *logWriter, r *http.Request, f *Fault) bool {
	h := lw.Header()
	switch f.Kind {
	case Fault429, Fault503:
		if f.RetryAfter != "" {
			h.Set("Retry-After", f.RetryAfter)
		}
		code, _ := strconv.Atoi(f.Kind)
		text(lw, r, code, "text/html; charset=utf-8", fmt.Sprintf("<html><body><h1>%d</h1><p>请求过于频繁，请稍后再试。</p></body></html>", code))
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-w.done:
		}
	case FaultSlow:
		lw.slowBPS = f.BytesPerSec
		if lw.slowBPS <= 0 {
			lw.slowBPS = 200
		}
		return false
	case FaultHuge:
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(HugeSize))
		lw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return true
		}
		chunk := bytes.Repeat([]byte("<p>数据数据数据数据数据</p>\n"), 1024) // 32 KiB-ish
		for left := HugeSize; left > 0; {
			n := min(left, len(chunk))
			if _, err := lw.Write(chunk[:n]); err != nil {
				return true
			}
			left -= n
		}
	case FaultGzipBomb:
		bomb := w.bomb()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(bomb)))
		lw.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = lw.Write(bomb)
		}
	case FaultRedirectLoop:
		target := r.URL.Path + "?zz_loop=1"
		if r.URL.Query().Get("zz_loop") != "" {
			target = r.URL.Path
		}
		h.Set("Location", target)
		text(lw, r, http.StatusFound, "text/html; charset=utf-8", "<html><body>moved</body></html>")
	case FaultRedirect:
		h.Set("Location", f.Location)
		text(lw, r, http.StatusFound, "text/html; charset=utf-8", "<html><body>moved</body></html>")
	case FaultRobots500:
		text(lw, r, http.StatusInternalServerError, "text/plain; charset=utf-8", "internal server error\n")
	case FaultRobotsTighten:
		return false
	case FaultCharsetLie:
		lw.charsetLie = true
		return false
	case FaultNoRange:
		lw.noRange = true
		return false
	case FaultCaptcha:
		text(lw, r, http.StatusOK, "text/html; charset=utf-8", captchaPage)
	case FaultChallenge:
		w.serveChallenge(lw, r)
	}
	return true
}

const captchaPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证</title></head><body>
<form method="post" action="/__captcha">` + CaptchaMarker + `
<img src="/__captcha/image.png" alt="验证码"><input name="code" maxlength="4"><button type="submit">提交</button>
</form></body></html>`

// bomb builds the gzip bomb once: one member of 1 MiB of zeros, repeated.
// gzip allows concatenated members and every mainstream decoder (Go's
// included) reads them all, so the body inflates to GzipBombSize without
// spending seconds compressing gigabytes.
func (w *World) bomb() []byte {
	w.gzipBombOnce.Do(func() {
		var member bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, 1<<20))
		_ = zw.Close()
		w.gzipBomb = bytes.Repeat(member.Bytes(), GzipBombSize/(1<<20))
	})
	return w.gzipBomb
}

// lyingCharset returns res under a Content-Type naming the wrong charset,
// for the charset_lie fault; anything but an HTML page is left alone.
func lyingCharset(res *resource) *resource {
	ct := strings.ToLower(res.ctype)
	if !strings.HasPrefix(ct, "text/html") {
		return res
	}
	lie := *res
	if strings.Contains(ct, "charset=utf-8") {
		lie.ctype = "text/html; charset=gbk"
	} else {
		lie.ctype = "text/html; charset=utf-8" // every other page here is GB18030
	}
	return &lie
}
