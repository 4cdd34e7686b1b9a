package fetch

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/browser"
	"zhizhi/internal/sim"
)

// testPage is served by a local server pinned as a host of the resolve
// map: its own script must run, every other request it makes aims at a
// forbidden address.
const proxyTestPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>代理测试</title></head>
<body><p id="own">未运行</p>
<img src="http://10.0.0.1/x.png">
<img src="http://169.254.169.254/latest/meta-data/">
<script>
fetch("http://inside.gov.test/api").catch(function () {});
fetch("https://10.0.0.2/").catch(function () {});
</script>
<script src="/own.js"></script>
</body></html>`

const ownJS = `document.getElementById("own").textContent = "脚本已运行";`

// pageServer serves proxyTestPage-like pages and remembers what it was
// asked for.
type pageServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPageServer(t *testing.T, routes map[string]string) *pageServer {
	t.Helper()
	s := &pageServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Host+r.URL.Path)
		s.mu.Unlock()
		body, ok := routes[r.URL.Path]
		switch {
		case !ok:
			http.NotFound(w, r)
		case strings.HasPrefix(body, "redirect:"):
			http.Redirect(w, r, strings.TrimPrefix(body, "redirect:"), http.StatusFound)
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "application/javascript")
			io.WriteString(w, body)
		case r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, body)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pageServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// TestBrowserProxyWithChromium: Chromium started with the proxy reaches a
// simulated host and a pinned local host, and a page's requests to private
// and metadata addresses — let through by a gate that allows everything —
// are refused by the proxy. The guard's dialer reaches loopback only.
func TestBrowserProxyWithChromium(t *testing.T) {
	needChromium(t)
	w, err := sim.Start(context.Background(), sim.Options{Seed: 4, Scale: 1})
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(w.Close)
	pages := newPageServer(t, map[string]string{"/": proxyTestPage, "/own.js": ownJS})

	resolve := ResolveMap(w.ResolveMap())
	resolve["www.a.gov.test"] = pages.Listener.Addr().String()
	var (
		mu      sync.Mutex
		refused = map[string]string{}
	)
	guard := &Guard{
		Resolve: resolve,
		LookupIP: func(_ context.Context, host string) ([]net.IP, error) {
			if ips, ok := proxyDNS[host]; ok {
				return ips, nil
			}
			t.Errorf("unexpected DNS lookup for %q", host)
			return nil, &net.DNSError{Err: "no DNS in tests", Name: host, IsNotFound: true}
		},
		Dial: loopbackOnly(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Admit stands for a client whose own gate was fooled into admitting
	// the page's targets; Chromium's background traffic (component
	// updates, sign-in) stays refused before DNS, as in the client.
	admitted := map[string]bool{"www.gd.gov.test": true, "www.a.gov.test": true, "10.0.0.1": true,
		"169.254.169.254": true, "inside.gov.test": true, "10.0.0.2": true}
	proxy, err := StartBrowserProxy(ctx, guard, BrowserProxyOptions{
		Logger: quietLogger(),
		Admit: func(host string) error {
			if admitted[host] {
				return nil
			}
			return &RefusedError{Host: host, Reason: "no page of this host is being rendered"}
		},
		Refused: func(target string, err error) {
			mu.Lock()
			refused[target] = err.Error()
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	b, err := browser.New(ctx, browser.Options{
		UAToken: UserAgent("test", "https://zhizhi.example/contact"),
		Proxy:   proxy.URL(),
		// A gate that lets everything through: the proxy alone must hold.
		Allow: func(_ context.Context, u *url.URL) error {
			return nil
		},
		BlockTypes: []string{},
		Logger:     quietLogger(),
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	defer b.Close()

	t.Run("simulated host renders through the proxy", func(t *testing.T) {
		target := truthURL(t, w, "www.gd.gov.test", "/")
		p, err := b.Render(ctx, target, browser.RenderOptions{})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if p.Status != 200 || p.Title == "" {
			t.Errorf("status %d title %q", p.Status, p.Title)
		}
		u, _ := url.Parse(target)
		seen := false
		for _, a := range w.AccessLog("www.gd.gov.test") {
			if a.Path == u.RequestURI() && a.UserAgent == b.UserAgent() {
				seen = true
			}
		}
		if !seen {
			t.Errorf("the sim never saw %s from the browser", u.RequestURI())
		}
	})

	t.Run("forbidden addresses refused by the proxy", func(t *testing.T) {
		p, err := b.Render(ctx, "http://www.a.gov.test/", browser.RenderOptions{})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if p.Status != 200 || !strings.Contains(p.HTML, "脚本已运行") {
			t.Errorf("status %d; the page's own script did not run: %.300s", p.Status, p.HTML)
		}
		mu.Lock()
		defer mu.Unlock()
		for target, want := range map[string]string{
			"http://10.0.0.1/x.png":                    "private address",
			"http://169.254.169.254/latest/meta-data/": "metadata address",
			"http://inside.gov.test/api":               "resolves to private address 10.1.2.3",
			"10.0.0.2:443":                             "private address",
		} {
			if got, ok := refused[target]; !ok || !strings.Contains(got, want) {
				t.Errorf("proxy refusal of %s: %q (recorded %v), want %q", target, got, ok, want)
			}
		}
		for _, rec := range p.Requests {
			if strings.Contains(rec.URL, "www.a.gov.test") {
				continue
			}
			if rec.Status != 0 && rec.Status != http.StatusForbidden {
				t.Errorf("%s answered %d, want the proxy's 403 or a failed request", rec.URL, rec.Status)
			}
		}
	})
	if got := pages.seen(); len(got) == 0 {
		t.Error("the pinned page server saw nothing")
	}
}
