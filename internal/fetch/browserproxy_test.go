package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxyEnv is a browser proxy whose guard pins www.a.gov.test to a local
// upstream, answers DNS from a fixed table (no real lookup) and can only
// dial loopback.
type proxyEnv struct {
	upstream *httptest.Server
	guard    *Guard
	proxy    *BrowserProxy

	mu      sync.Mutex
	refused map[string]string // target → reason
	lookups []string
}

// proxyDNS answers the names the tests use; each resolves to a forbidden
// address, which the guard must refuse before any dial.
var proxyDNS = map[string][]net.IP{
	"inside.gov.test":  {net.ParseIP("10.1.2.3")},
	"meta.gov.test":    {net.ParseIP("169.254.169.254")},
	"ula.gov.test":     {net.ParseIP("fd00::1")},
	"rebind.gov.test":  {net.ParseIP("192.168.1.10")},
	"cgnat.gov.test":   {net.ParseIP("100.64.0.1")},
	"mapped.gov.test":  {net.ParseIP("::ffff:172.16.0.1")},
	"loopish.gov.test": {net.ParseIP("127.0.0.53")},
}

func newProxyEnv(t *testing.T, upstream http.Handler, opts BrowserProxyOptions) *proxyEnv {
	t.Helper()
	e := &proxyEnv{upstream: httptest.NewServer(upstream), refused: map[string]string{}}
	t.Cleanup(e.upstream.Close)
	e.guard = &Guard{
		Resolve: ResolveMap{"www.a.gov.test": e.upstream.Listener.Addr().String()},
		LookupIP: func(_ context.Context, host string) ([]net.IP, error) {
			e.mu.Lock()
			e.lookups = append(e.lookups, host)
			e.mu.Unlock()
			if ips, ok := proxyDNS[host]; ok {
				return ips, nil
			}
			return nil, fmt.Errorf("no DNS in tests: %s", host)
		},
		Dial: loopbackOnly(t),
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	opts.Refused = func(target string, err error) {
		e.mu.Lock()
		e.refused[target] = err.Error()
		e.mu.Unlock()
	}
	p, err := StartBrowserProxy(context.Background(), e.guard, opts)
	if err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	e.proxy = p
	return e
}

// client is a Go HTTP client that sends everything through the proxy.
func (e *proxyEnv) client() *http.Client {
	pu, _ := url.Parse(e.proxy.URL())
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true},
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func (e *proxyEnv) refusal(target string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refused[target]
}

// rawConnect sends a CONNECT for target and returns the status line and
// the connection, positioned after the answer's headers.
func (e *proxyEnv) rawConnect(t *testing.T, target string) (status int, body string, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", e.proxy.Addr())
	if err != nil {
		t.Fatalf("dial proxy: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br = bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("read CONNECT answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), conn, br
	}
	_ = conn.SetDeadline(time.Time{})
	return resp.StatusCode, "", conn, br
}

func pageHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Seen-Host", r.Host)
		io.WriteString(w, body)
	})
}

// TestBrowserProxyGuards: whatever asks the proxy for a forbidden address
// (the browser gate let it through, or never asked) gets 403 with the
// guard's reason, and only the pinned host is reached.
func TestBrowserProxyGuards(t *testing.T) {
	e := newProxyEnv(t, pageHandler("<html><body>本站正文</body></html>"), BrowserProxyOptions{})
	hc := e.client()

	t.Run("pinned host through the proxy", func(t *testing.T) {
		resp, err := hc.Get("http://www.a.gov.test/page.html")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "<html><body>本站正文</body></html>" {
			t.Fatalf("status %d body %q", resp.StatusCode, b)
		}
		if got := resp.Header.Get("X-Seen-Host"); got != "www.a.gov.test" {
			t.Errorf("upstream saw Host %q, want the original www.a.gov.test", got)
		}
	})

	for _, tc := range []struct {
		name, url, want string
	}{
		{"private literal", "http://10.0.0.1/", "private address"},
		{"metadata endpoint", "http://169.254.169.254/latest/meta-data/", "metadata address"},
		{"name resolving to private", "http://inside.gov.test/api", "inside.gov.test resolves to private address 10.1.2.3"},
		{"name resolving to metadata", "http://meta.gov.test/", "resolves to metadata address 169.254.169.254"},
		{"name resolving to IPv6 ULA", "http://ula.gov.test/", "unique local address"},
		{"name resolving to RFC 1918 /16", "http://rebind.gov.test/", "private address 192.168.1.10"},
		{"name resolving to CGNAT", "http://cgnat.gov.test/", "carrier-grade NAT"},
		{"name resolving to mapped private", "http://mapped.gov.test/", "private address"},
		{"name resolving to loopback", "http://loopish.gov.test/", "loopback address"},
		{"loopback literal not in the map", "http://127.0.0.1/", "loopback address"},
		{"hex loopback", "http://0x7f.1/", "loopback address"},
		{"localhost", "http://localhost/", "loopback name"},
		{"IPv4-mapped IPv6 private", "http://[::ffff:10.0.0.1]/", "private address"},
		{"IPv6 link-local", "http://[fe80::1]/", "link-local"},
		{"port not allowed", "http://public.gov.test:8080/", "port 8080 is not allowed"},
		{"the proxy itself", "http://" + e.proxy.Addr() + "/", "not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := hc.Get(tc.url)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403; body %q", resp.StatusCode, b)
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("body %q does not give the reason %q", b, tc.want)
			}
			u, _ := url.Parse(tc.url)
			if got := e.refusal(u.String()); !strings.Contains(got, tc.want) {
				t.Errorf("refusal recorded as %q, want %q", got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name, target, want string
	}{
		{"tunnel to a private literal", "10.0.0.2:443", "private address"},
		{"tunnel to the metadata endpoint", "169.254.169.254:443", "metadata address"},
		{"tunnel to a name resolving to private", "inside.gov.test:443", "resolves to private address 10.1.2.3"},
		{"tunnel to an IPv6 ULA", "[fd12::1]:443", "unique local address"},
		{"tunnel to a port not allowed", "public.gov.test:22", "port 22 is not allowed"},
		{"tunnel target without a port", "public.gov.test", "not host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _, _ := e.rawConnect(t, tc.target)
			if status != http.StatusForbidden || !strings.Contains(body, tc.want) {
				t.Errorf("CONNECT %s: %d %q, want 403 with %q", tc.target, status, body, tc.want)
			}
		})
	}

	t.Run("origin-form request is not a proxy request", func(t *testing.T) {
		resp, err := http.Get(e.proxy.URL() + "/page.html")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "not a proxy request") {
			t.Errorf("status %d body %q, want 403 not a proxy request", resp.StatusCode, b)
		}
	})

	t.Run("tunnel to the pinned host", func(t *testing.T) {
		status, body, conn, br := e.rawConnect(t, "www.a.gov.test:443")
		if status != 200 {
			t.Fatalf("CONNECT: %d %q", status, body)
		}
		// The upstream speaks plain HTTP; the tunnel carries any bytes.
		fmt.Fprintf(conn, "GET /t HTTP/1.1\r\nHost: www.a.gov.test\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("read through the tunnel: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "本站正文") {
			t.Errorf("through the tunnel: %d %q", resp.StatusCode, b)
		}
	})
}

// TestBrowserProxyAdmit: a host the client admits for no page is refused
// before the guard asks DNS about it, so Chromium's own background traffic
// never leaves the machine.
func TestBrowserProxyAdmit(t *testing.T) {
	e := newProxyEnv(t, pageHandler("ok"), BrowserProxyOptions{
		Admit: func(host string) error {
			if host == "www.a.gov.test" {
				return nil
			}
			return &RefusedError{Host: host, Reason: "not a page being rendered"}
		},
	})
	hc := e.client()
	resp, err := hc.Get("http://www.a.gov.test/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("admitted host: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = hc.Get("http://inside.gov.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("host not admitted: status %d, want 403", resp.StatusCode)
	}
	if status, body, _, _ := e.rawConnect(t, "update.googleapis.com:443"); status != http.StatusForbidden || !strings.Contains(body, "not a page being rendered") {
		t.Errorf("CONNECT to a host not admitted: %d %q", status, body)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.lookups) != 0 {
		t.Errorf("DNS asked about %v; a host not admitted must not even be looked up", e.lookups)
	}
}

// TestBrowserProxyStreams: the proxy hands each part of a body on as it
// comes. The upstream sends its second half only after the client has read
// the first, so a proxy that buffered the body would never finish.
func TestBrowserProxyStreams(t *testing.T) {
	firstRead := make(chan struct{})
	e := newProxyEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first|")
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Second):
			return // the test fails below: the client never saw the first part
		}
		io.WriteString(w, "second")
	}), BrowserProxyOptions{})
	resp, err := e.client().Get("http://www.a.gov.test/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('|')
	if err != nil || first != "first|" {
		t.Fatalf("first part: %q %v", first, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second" {
		t.Errorf("rest: %q %v, want the second part after the first was read", rest, err)
	}
}

// TestBrowserProxyCutUpstream: an upstream that dies mid-body must not
// reach Chromium as a complete (truncated) page: the client sees an error.
func TestBrowserProxyCutUpstream(t *testing.T) {
	e := newProxyEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the body is chunked, and only the proxy's
		// abort can tell the client it ended early.
		w.WriteHeader(200)
		io.WriteString(w, "only part of it")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection
	}), BrowserProxyOptions{})
	resp, err := e.client().Get("http://www.a.gov.test/cut")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("read %d bytes and no error: a cut body arrived as a whole one", len(b))
	}
}

// TestBrowserProxyIdleTunnel: a tunnel nobody uses is closed by the proxy.
func TestBrowserProxyIdleTunnel(t *testing.T) {
	e := newProxyEnv(t, pageHandler("ok"), BrowserProxyOptions{IdleTimeout: 100 * time.Millisecond})
	status, body, conn, br := e.rawConnect(t, "www.a.gov.test:443")
	if status != 200 {
		t.Fatalf("CONNECT: %d %q", status, body)
	}
	// A generous deadline only to keep a broken proxy from hanging the
	// test: the proxy must close first.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the idle tunnel was still open when the test gave up")
	}
	if !errors.Is(err, io.EOF) && !isConnReset(err) {
		t.Errorf("read on an idle tunnel: %v, want the proxy to close it", err)
	}
}

// TestBrowserProxyClose: Close ends open tunnels and nobody connects after.
func TestBrowserProxyClose(t *testing.T) {
	e := newProxyEnv(t, pageHandler("ok"), BrowserProxyOptions{})
	status, body, conn, br := e.rawConnect(t, "www.a.gov.test:443")
	if status != 200 {
		t.Fatalf("CONNECT: %d %q", status, body)
	}
	e.proxy.Close()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the tunnel outlived Close")
	}
	if c, err := net.Dial("tcp", e.proxy.Addr()); err == nil {
		c.Close()
		t.Error("the proxy still accepts connections after Close")
	}
}

// TestBrowserProxyStopsWithContext: the proxy ends with the context it was
// started with (the client's browser tier).
func TestBrowserProxyStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := StartBrowserProxy(ctx, &Guard{Dial: loopbackOnly(t)}, BrowserProxyOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Errorf("proxy listens on %s, want 127.0.0.1 only", p.Addr())
	}
	cancel()
	<-p.served
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Error("the proxy still accepts connections after its context ended")
	}
}

func isConnReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// TestBrowserProxyAnswersFaviconItself: Chromium asks for /favicon.ico on
// its own, outside the request gate (so unpaced and unlogged). The proxy
// answers it with a 404 and the site never sees it; a page's other
// requests still go through.
func TestBrowserProxyAnswersFaviconItself(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	e := newProxyEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}), BrowserProxyOptions{})
	hc := e.client()
	for _, u := range []string{"http://www.a.gov.test/favicon.ico", "http://www.a.gov.test/favicon.ico?v=2", "http://www.a.gov.test/page.html"} {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusNotFound
		if strings.HasSuffix(u, "page.html") {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", u, resp.StatusCode, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "/page.html" {
		t.Errorf("the site saw %v, want only /page.html", seen)
	}
}
