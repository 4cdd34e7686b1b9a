package fetch

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
)

// AcceptEncoding is what zhizhi offers; DecodeBody understands each.
const AcceptEncoding = "gzip, deflate, br"

// MaxRedirects is the most redirects any request follows.
const MaxRedirects = 5

// Limits bound one request. A site may make them stricter, never looser.
type Limits struct {
	// MaxRawBytes caps the bytes read off the wire for the body.
	MaxRawBytes int64
	// MaxDecompressedBytes caps the body after Content-Encoding decoding,
	// so a small compressed bomb cannot fill memory.
	MaxDecompressedBytes int64
	// MaxRedirects caps redirects; values above MaxRedirects are clamped.
	MaxRedirects int
	// RequestTimeout bounds one request from dial to the last body byte,
	// redirects included. The caller's context deadline is the overall
	// deadline of the job and applies as well.
	RequestTimeout time.Duration
	// TruncateAt, when positive, stops reading the decoded body quietly
	// after that many bytes (Response.Truncated): the byte-capped head read
	// of summary-access sites.
	TruncateAt int64
}

// DefaultLimits are the limits used when a site sets none.
var DefaultLimits = Limits{
	MaxRawBytes:          20 << 20,
	MaxDecompressedBytes: 50 << 20,
	MaxRedirects:         MaxRedirects,
	RequestTimeout:       30 * time.Second,
}

func (l Limits) redirects() int {
	if l.MaxRedirects <= 0 || l.MaxRedirects > MaxRedirects {
		return MaxRedirects
	}
	return l.MaxRedirects
}

// ErrTooLarge is a body that exceeded a size limit.
type ErrTooLarge struct {
	Limit int64
	Kind  string // "raw" (wire bytes) or "decompressed"
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("body exceeds %s limit of %d bytes", e.Kind, e.Limit)
}

// ErrTooManyRedirects is a redirect chain longer than the limit.
var ErrTooManyRedirects = errors.New("too many redirects")

// ErrTimeout is a request that ran out of time, per request or overall.
var ErrTimeout = errors.New("timed out")

// limitReader fails with *ErrTooLarge once more than limit bytes pass, and
// counts what passed. Unlike io.LimitReader it tells a body that ends
// exactly at the limit from one that goes beyond it.
type limitReader struct {
	r     io.Reader
	limit int64
	kind  string
	n     int64
}

// NewLimitReader returns a reader that yields at most limit bytes of r and
// then fails with *ErrTooLarge{limit, kind} if r has more.
func NewLimitReader(r io.Reader, limit int64, kind string) io.Reader {
	return &limitReader{r: r, limit: limit, kind: kind}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, &ErrTooLarge{Limit: l.limit, Kind: l.kind}
	}
	// Allow one byte past the limit to be read so that overflow is seen
	// without buffering more than that.
	if max := l.limit - l.n + 1; int64(len(p)) > max {
		p = p[:max]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		return n - int(l.n-l.limit), &ErrTooLarge{Limit: l.limit, Kind: l.kind}
	}
	return n, err
}

// Body is a response body decoded and bounded by Limits. WireBytes counts
// the bytes read off the wire so far (what the site sent us).
type Body struct {
	io.Reader
	raw    *limitReader
	closer io.Closer
	extra  io.Closer
}

// WireBytes returns the number of body bytes read off the wire so far.
func (b *Body) WireBytes() int64 { return b.raw.n }

// Close closes the decoder and the underlying body.
func (b *Body) Close() error {
	if b.extra != nil {
		b.extra.Close()
	}
	return b.closer.Close()
}

// DecodeBody wraps resp.Body: wire bytes are capped at l.MaxRawBytes, the
// Content-Encoding (gzip, deflate, br, or a chain of them) is decoded and
// the decoded bytes are capped at l.MaxDecompressedBytes. A Content-Length
// already over the raw limit fails at once, before any byte is read.
func DecodeBody(resp *http.Response, l Limits) (*Body, error) {
	// A head read takes only its head, however large the whole is.
	if l.MaxRawBytes > 0 && l.TruncateAt <= 0 && resp.ContentLength > l.MaxRawBytes {
		resp.Body.Close()
		return nil, &ErrTooLarge{Limit: l.MaxRawBytes, Kind: "raw"}
	}
	rawLimit := l.MaxRawBytes
	if rawLimit <= 0 {
		rawLimit = DefaultLimits.MaxRawBytes
	}
	decLimit := l.MaxDecompressedBytes
	if decLimit <= 0 {
		decLimit = DefaultLimits.MaxDecompressedBytes
	}
	raw := &limitReader{r: resp.Body, limit: rawLimit, kind: "raw"}
	b := &Body{raw: raw, closer: resp.Body}
	var r io.Reader = raw
	codings := strings.Split(resp.Header.Get("Content-Encoding"), ",")
	// Codings are listed in the order they were applied; undo them last
	// first.
	for i := len(codings) - 1; i >= 0; i-- {
		switch c := strings.ToLower(strings.TrimSpace(codings[i])); c {
		case "", "identity":
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err != nil {
				resp.Body.Close()
				return nil, fmt.Errorf("decode body: gzip: %w", asLimitErr(err))
			}
			r, b.extra = zr, zr
		case "deflate":
			r = newDeflateReader(r)
		case "br":
			r = brotli.NewReader(r)
		default:
			resp.Body.Close()
			return nil, fmt.Errorf("decode body: unsupported content-encoding %q", c)
		}
	}
	b.Reader = &limitReader{r: r, limit: decLimit, kind: "decompressed"}
	return b, nil
}

// asLimitErr keeps a size-limit error visible when a decoder wraps it.
func asLimitErr(err error) error {
	var tl *ErrTooLarge
	if errors.As(err, &tl) {
		return tl
	}
	return err
}

// newDeflateReader accepts both what RFC 9110 means by "deflate" (a zlib
// stream) and the raw deflate some servers send instead.
func newDeflateReader(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	hdr, err := br.Peek(2)
	if err == nil && hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
		zr, err := zlib.NewReader(br)
		if err == nil {
			return zr
		}
		return errReader{fmt.Errorf("deflate: %w", err)}
	}
	return flate.NewReader(br)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// NewClient returns an http.Client whose every connection goes through the
// guard: DNS answers, redirects and pinned hosts are all judged at dial
// time, each redirect hop is also checked with CheckURL, and at most
// l.MaxRedirects redirects are followed. Proxies from the environment are
// ignored on purpose: a proxy would dial for us, past the guard.
// Compression is handled by DecodeBody, not the transport, so that wire
// bytes can be counted and capped.
func (g *Guard) NewClient(l Limits) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: l.RequestTimeout,
		ExpectContinueTimeout: time.Second,
	}
	max := l.redirects()
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > max {
				return fmt.Errorf("follow redirect to %s: %w (limit %d)", req.URL.Redacted(), ErrTooManyRedirects, max)
			}
			if err := g.CheckURL(req.URL); err != nil {
				return err
			}
			return g.CheckRedirect(via[len(via)-1].URL, req.URL)
		},
	}
}

// Do sends req with client under l: the URL is checked by the guard first,
// the whole request (redirects and body included) must finish within
// l.RequestTimeout and ctx's deadline, and the body is read through
// DecodeBody. Breaches come back as *ErrTooLarge, ErrTooManyRedirects or
// ErrTimeout (test with errors.Is / errors.As); refusals as *RefusedError.
func (g *Guard) Do(ctx context.Context, client *http.Client, req *http.Request, l Limits) (*Response, error) {
	if err := g.CheckURL(req.URL); err != nil {
		return nil, err
	}
	if l.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.RequestTimeout)
		defer cancel()
	}
	req = req.WithContext(ctx)
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", AcceptEncoding)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, classifyErr(ctx, fmt.Errorf("fetch %s: %w", req.URL.Redacted(), err))
	}
	out := &Response{
		URL:         resp.Request.URL.String(),
		Status:      resp.StatusCode,
		Header:      resp.Header,
		NotModified: resp.StatusCode == http.StatusNotModified,
		Tier:        TierDirect,
	}
	if req.Method == http.MethodHead || resp.StatusCode == http.StatusNotModified || resp.StatusCode == http.StatusNoContent {
		resp.Body.Close()
		out.Duration = time.Since(start)
		return out, nil
	}
	// A head read never takes more than TruncateAt bytes off the wire
	// either: whatever the site sends past them stays unread, and the
	// connection is closed rather than drained.
	var capped *capReader
	if l.TruncateAt > 0 {
		capped = &capReader{r: resp.Body, left: l.TruncateAt}
		resp.Body = struct {
			io.Reader
			io.Closer
		}{capped, resp.Body}
	}
	body, err := DecodeBody(resp, l)
	if err != nil {
		return out, classifyErr(ctx, fmt.Errorf("fetch %s: %w", req.URL.Redacted(), err))
	}
	defer body.Close()
	var r io.Reader = body
	if l.TruncateAt > 0 {
		r = io.LimitReader(body, l.TruncateAt+1)
	}
	data, err := io.ReadAll(r)
	out.WireBytes = body.WireBytes()
	out.Duration = time.Since(start)
	if l.TruncateAt > 0 {
		// Cut short: more decoded bytes than the head, or the wire cap
		// reached with more to come (a compressed stream cut there ends
		// unexpectedly).
		more := int64(len(data)) > l.TruncateAt ||
			capped.full() && (err == nil || errors.Is(err, io.ErrUnexpectedEOF)) && bodyGoesOn(resp, out.WireBytes)
		if more {
			data, out.Truncated, err = data[:min(int64(len(data)), l.TruncateAt)], true, nil
		}
	}
	if err != nil {
		return out, classifyErr(ctx, fmt.Errorf("fetch %s: read body: %w", req.URL.Redacted(), asLimitErr(err)))
	}
	out.Body = data
	return out, nil
}

// capReader ends a body quietly after left bytes.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capReader) full() bool { return c != nil && c.left <= 0 }

// bodyGoesOn tells whether a body of which read bytes came has more: by
// the complete length a 206's Content-Range gives, or the Content-Length;
// with neither it cannot be known without reading on, and is taken to.
func bodyGoesOn(resp *http.Response, read int64) bool {
	if resp.StatusCode == http.StatusPartialContent {
		if cr := resp.Header.Get("Content-Range"); cr != "" {
			if _, total, ok := strings.Cut(cr, "/"); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64); err == nil {
					return n > read
				}
			}
		}
		return true
	}
	if resp.ContentLength >= 0 {
		return resp.ContentLength > read
	}
	return true
}

// classifyErr makes every way of running out of time match ErrTimeout.
func classifyErr(ctx context.Context, err error) error {
	var tl *ErrTooLarge
	if errors.As(err, &tl) || errors.Is(err, ErrTooManyRedirects) {
		return err
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}
