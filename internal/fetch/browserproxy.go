package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the browser proxy.
const (
	// DefaultProxyIdleTimeout closes a CONNECT tunnel that carried no
	// byte either way for this long, and idle keep-alive connections.
	DefaultProxyIdleTimeout = 90 * time.Second
	// proxyHeaderTimeout bounds how long the proxy waits for an upstream
	// answer's headers; the body then streams for as long as Chromium reads.
	proxyHeaderTimeout = 60 * time.Second
	proxyDialTimeout   = 30 * time.Second
	proxyCopyBuffer    = 32 << 10
)

// BrowserProxyOptions configure StartBrowserProxy.
type BrowserProxyOptions struct {
	// IdleTimeout closes a tunnel idle for this long; zero means
	// DefaultProxyIdleTimeout.
	IdleTimeout time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Admit, when set, is asked first about every target host (lower
	// case, no port), before any DNS lookup: the client admits only the
	// hosts of the pages its browser tier is rendering, so whatever
	// Chromium tries on its own (component updates, sign-in, safe
	// browsing) never leaves the machine. Nil admits every host the guard
	// allows.
	Admit func(host string) error
	// Refused, when set, is told about every request the proxy refused
	// (target as the client named it: "host:port" for CONNECT, the URL
	// otherwise). Tests and diagnostics use it; it may be called from
	// several goroutines at once.
	Refused func(target string, err error)
	// Relay, when set, is told of every plain-HTTP request the proxy sends
	// upstream, before it goes, and returns where to count the body bytes
	// the answer brings (as they came: still content-coded, transfer
	// coding removed); nil counts nothing. The count grows before each
	// chunk is passed to Chromium, so once Chromium has a body whole, its
	// count is complete. This is how the browser tier's crawl_log bytes
	// are what the site sent, as on the direct tier; Chromium's own figure
	// includes the headers. (A CONNECT tunnel carries TLS the proxy cannot
	// read, and is not told of.)
	Relay func(method, rawURL string) *atomic.Int64
	// Pace, when set, is called for every plain-HTTP request just before
	// the proxy sends it upstream, with the target host (lower case, no
	// port), and the request waits until it returns: this is where a
	// browser request spends its host's token, at the moment it reaches
	// the site. Spent earlier (when Chromium's gate let it through), the
	// request could still queue inside Chromium — on a busy machine for
	// seconds — and reach the site closer to the next one than the
	// bucket allows. The proxy calls sent when the answer begins (or the
	// request failed): the site has seen the request by then. An error
	// fails the request (502). A CONNECT tunnel carries TLS the proxy
	// cannot read: its requests are paced at the gate.
	Pace func(ctx context.Context, host string) (sent func(), err error)

	stall func(*http.Request) // Client.stallBrowser
}

// BrowserProxy is the local forward proxy that carries every connection
// Chromium makes. Chromium's own resolver is switched off, so the proxy is
// its only way out, and the proxy dials upstream only through the fetcher's
// Guard.DialContext: the resolve map, the private-address refusal at dial
// time (DNS rebinding included) and the port allow-list apply to each
// browser connection exactly as they do to direct requests, whatever the
// browser gate decided. It listens on 127.0.0.1 only and serves plain-HTTP
// requests in absolute form and CONNECT tunnels; anything else gets 403 with
// the reason. Bodies stream through; nothing is buffered whole.
type BrowserProxy struct {
	guard   *Guard
	opts    BrowserProxyOptions
	log     *slog.Logger
	ln      net.Listener
	srv     *http.Server
	tr      *http.Transport
	stopCtx context.Context // ends at Close: in-flight upstream work stops
	stop    context.CancelFunc

	mu      sync.Mutex
	tunnels map[net.Conn]struct{} // hijacked conns, which http.Server no longer tracks
	closed  bool

	closeOnce sync.Once
	served    chan struct{}
}

// StartBrowserProxy listens on 127.0.0.1 on a free port and serves until
// Close or until ctx ends.
func StartBrowserProxy(ctx context.Context, g *Guard, opts BrowserProxyOptions) (*BrowserProxy, error) {
	if g == nil {
		return nil, errors.New("start browser proxy: a guard is required")
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultProxyIdleTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// tcp4 on 127.0.0.1: never reachable from another host, whatever the
	// machine's firewall says.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start browser proxy: listen: %w", err)
	}
	stopCtx, stop := context.WithCancel(context.Background())
	p := &BrowserProxy{
		guard:   g,
		opts:    opts,
		log:     opts.Logger.With("component", "browser-proxy"),
		ln:      ln,
		stopCtx: stopCtx,
		stop:    stop,
		tunnels: make(map[net.Conn]struct{}),
		served:  make(chan struct{}),
		tr: &http.Transport{
			// Never a proxy from the environment: it would dial for us,
			// past the guard.
			Proxy:       nil,
			DialContext: g.DialContext,
			// Chromium decodes what it asked for; the proxy passes
			// bytes through untouched.
			DisableCompression:    true,
			ForceAttemptHTTP2:     false,
			MaxIdleConnsPerHost:   1,
			IdleConnTimeout:       opts.IdleTimeout,
			ResponseHeaderTimeout: proxyHeaderTimeout,
			ExpectContinueTimeout: time.Second,
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       opts.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return stopCtx },
	}
	go func() {
		defer close(p.served)
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("browser proxy stopped", "error", err)
		}
	}()
	context.AfterFunc(ctx, func() { p.Close() })
	p.log.Debug("browser proxy listening", "addr", ln.Addr().String())
	return p, nil
}

// Addr is the proxy's "127.0.0.1:port".
func (p *BrowserProxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy as Chromium's --proxy-server takes it.
func (p *BrowserProxy) URL() string { return "http://" + p.Addr() }

// Close stops listening, ends every tunnel and request in flight and
// closes idle upstream connections. It is safe to call more than once.
func (p *BrowserProxy) Close() error {
	p.closeOnce.Do(func() {
		p.stop()
		_ = p.srv.Close()
		p.mu.Lock()
		p.closed = true
		for c := range p.tunnels {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.tr.CloseIdleConnections()
		<-p.served
	})
	return nil
}

// ServeHTTP answers one request from Chromium.
func (p *BrowserProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !fromLoopback(r.RemoteAddr) {
		// The listener is on 127.0.0.1; this is a second lock on the door.
		p.refuse(w, r.RemoteAddr, &RefusedError{Host: r.RemoteAddr, Reason: "the browser proxy serves loopback clients only"})
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	p.forward(w, r)
}

func fromLoopback(remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

func (p *BrowserProxy) admit(host string) error {
	if p.opts.Admit == nil {
		return nil
	}
	return p.opts.Admit(normalizeHostName(strings.Trim(host, "[]")))
}

// refuse answers 403 with the reason in words, as Chromium's error page and
// the logs show it.
func (p *BrowserProxy) refuse(w http.ResponseWriter, target string, err error) {
	p.log.Info("browser connection refused", "target", target, "reason", err.Error())
	if p.opts.Refused != nil {
		p.opts.Refused(target, err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, "zhizhi browser proxy: "+err.Error()+"\n")
}

// badGateway answers 502 when the guard allowed the connection but the
// upstream could not be reached or answered nonsense.
func (p *BrowserProxy) badGateway(w http.ResponseWriter, target string, err error) {
	p.log.Debug("browser upstream failed", "target", target, "error", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = io.WriteString(w, "zhizhi browser proxy: "+err.Error()+"\n")
}

// answer sends err as 403 when the guard refused, 502 otherwise.
func (p *BrowserProxy) answer(w http.ResponseWriter, target string, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		p.refuse(w, target, re)
		return
	}
	p.badGateway(w, target, err)
}

// forward relays one plain-HTTP request given in absolute form.
func (p *BrowserProxy) forward(w http.ResponseWriter, r *http.Request) {
	target := r.URL.String()
	if !r.URL.IsAbs() || r.URL.Host == "" {
		p.refuse(w, r.RequestURI, &RefusedError{Host: r.Host, Reason: "not a proxy request (absolute-form URL or CONNECT expected)"})
		return
	}
	if !strings.EqualFold(r.URL.Scheme, "http") {
		// https goes through CONNECT; anything else is never fetched.
		p.refuse(w, target, &RefusedError{Host: r.URL.Host, Reason: "scheme " + r.URL.Scheme + " is not proxied (https goes through CONNECT)"})
		return
	}
	if isUpgrade(r.Header) {
		p.refuse(w, target, &RefusedError{Host: r.URL.Host, Reason: "protocol upgrades are not proxied"})
		return
	}
	if r.URL.Path == "/favicon.ico" {
		// Chromium sometimes asks for a site's icon outside the request
		// gate (which refuses it when asked), so the request would be
		// neither paced nor logged; zhizhi needs no icon. (Over https it
		// travels inside a tunnel the proxy cannot read.)
		http.NotFound(w, r)
		return
	}
	if p.opts.stall != nil {
		p.opts.stall(r)
	}
	if err := p.admit(r.URL.Hostname()); err != nil {
		p.refuse(w, target, err)
		return
	}
	if err := p.guard.CheckURL(r.URL); err != nil {
		p.refuse(w, target, err)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Host = r.URL.Host
	removeHopHeaders(out.Header)
	if r.ContentLength == 0 {
		out.Body = nil
	}
	sent := func() {}
	if p.opts.Pace != nil {
		var err error
		if sent, err = p.opts.Pace(r.Context(), normalizeHostName(r.URL.Hostname())); err != nil {
			p.badGateway(w, target, fmt.Errorf("pace %s: %w", r.URL.Redacted(), err))
			return
		}
	}
	var counted *atomic.Int64
	if p.opts.Relay != nil {
		counted = p.opts.Relay(r.Method, target)
	}
	resp, err := p.tr.RoundTrip(out)
	sent()
	if err != nil {
		p.answer(w, target, fmt.Errorf("proxy %s: %w", r.URL.Redacted(), err))
		return
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if counted != nil {
		body = countingReader{body, counted}
	}
	removeHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if err := streamCopy(w, body); err != nil {
		p.log.Debug("browser response cut short", "url", r.URL.Redacted(), "error", err)
		// Returning would end the chunked body cleanly and Chromium would
		// take a truncated page for a whole one; aborting the handler
		// (net/http's documented way) drops the connection instead.
		panic(http.ErrAbortHandler)
	}
}

// tunnel opens a CONNECT tunnel through the guard's dialer.
func (p *BrowserProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		p.refuse(w, target, &RefusedError{Host: target, Reason: "CONNECT target is not host:port"})
		return
	}
	if err := p.admit(host); err != nil {
		p.refuse(w, target, err)
		return
	}
	// A tunnel carries TLS: judge it as the https URL it stands for.
	if err := p.guard.CheckURL(&url.URL{Scheme: "https", Host: target}); err != nil {
		p.refuse(w, target, err)
		return
	}
	dctx, cancel := context.WithTimeout(r.Context(), proxyDialTimeout)
	up, err := p.guard.DialContext(dctx, "tcp", target)
	cancel()
	if err != nil {
		p.answer(w, target, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		p.badGateway(w, target, errors.New("connection cannot be hijacked"))
		return
	}
	down, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		p.log.Debug("hijack", "target", target, "error", err)
		return
	}
	if !p.track(down, up) {
		down.Close()
		up.Close()
		return
	}
	defer p.untrack(down, up)
	// The server's header read deadline may still be set on the hijacked
	// connection; from here the tunnel's idle deadline rules.
	_ = down.SetDeadline(time.Now().Add(p.opts.IdleTimeout))
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	p.splice(down, brw.Reader, up)
}

// splice copies both ways until either side ends or the tunnel is idle
// for IdleTimeout, then closes both. from holds what the server already
// read from down (normally nothing: Chromium waits for our 200).
func (p *BrowserProxy) splice(down net.Conn, from *bufio.Reader, up net.Conn) {
	idle := &idleWatch{d: p.opts.IdleTimeout, conns: []net.Conn{down, up}}
	idle.touch()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.CopyBuffer(idleWriter{up, idle}, idleReader{from, idle}, make([]byte, proxyCopyBuffer))
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.CopyBuffer(idleWriter{down, idle}, idleReader{up, idle}, make([]byte, proxyCopyBuffer))
		closeWrite(down)
		done <- struct{}{}
	}()
	// Each direction ends on its own (a half-close is passed on); a side
	// that stays silent runs into the idle deadline, and Close ends both.
	<-done
	<-done
}

func (p *BrowserProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *BrowserProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.tunnels, c)
		_ = c.Close()
	}
}

// idleWatch moves the deadline of a tunnel's two connections forward on
// every byte either way, so only a tunnel quiet in both directions times
// out.
type idleWatch struct {
	d     time.Duration
	conns []net.Conn

	mu   sync.Mutex
	last time.Time
}

func (iw *idleWatch) touch() {
	now := time.Now()
	iw.mu.Lock()
	defer iw.mu.Unlock()
	// Setting deadlines costs a syscall each; moving them on once per
	// eighth of the timeout is plenty.
	if !iw.last.IsZero() && now.Sub(iw.last) < iw.d/8 {
		return
	}
	iw.last = now
	for _, c := range iw.conns {
		_ = c.SetDeadline(now.Add(iw.d))
	}
}

type idleReader struct {
	r  io.Reader
	iw *idleWatch
}

func (r idleReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.iw.touch()
	}
	return n, err
}

type idleWriter struct {
	w  io.Writer
	iw *idleWatch
}

func (w idleWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if n > 0 {
		w.iw.touch()
	}
	return n, err
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// streamCopy copies an upstream body to Chromium, flushing after every
// read so a slow or endless body reaches the page as it comes and is never
// held in memory whole.
func streamCopy(w http.ResponseWriter, body io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, proxyCopyBuffer)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if ferr := rc.Flush(); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// countingReader adds the bytes read through it to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// hopHeaders are meaningful for one connection only (RFC 9110 §7.6.1) and
// are not forwarded.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

func isUpgrade(h http.Header) bool {
	if h.Get("Upgrade") != "" {
		return true
	}
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(name), "upgrade") {
				return true
			}
		}
	}
	return false
}
