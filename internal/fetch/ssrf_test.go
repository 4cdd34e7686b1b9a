package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"zhizhi/internal/fetch/ssrftest"
)

// loopbackOnlyDial is the real dialer wrapped so that whatever the guard
// lets through can only reach loopback: anything else fails the test
// without a packet being sent.
func loopbackOnlyDial(t testing.TB, dialed *atomic.Int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("guard let a connection to %s through; tests may only reach loopback", addr)
			return nil, fmt.Errorf("test dialer: %s is not loopback", addr)
		}
		if dialed != nil {
			dialed.Add(1)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// fakeDNS answers from a table and fails the test on unknown names, so no
// real resolver is ever asked.
func fakeDNS(t testing.TB, table map[string][]string) func(ctx context.Context, host string) ([]net.IP, error) {
	return func(ctx context.Context, host string) ([]net.IP, error) {
		addrs, ok := table[host]
		if !ok {
			t.Errorf("unexpected DNS lookup for %q", host)
			return nil, fmt.Errorf("no such host %q", host)
		}
		var ips []net.IP
		for _, a := range addrs {
			ips = append(ips, net.ParseIP(a))
		}
		return ips, nil
	}
}

var testDNS = ssrftest.DNS

func TestParseResolveMap(t *testing.T) {
	m, err := ParseResolveMap(" www.a.gov.test=127.0.0.1:18081, WWW.B.gov.test.=127.0.0.2:18081 ,,")
	if err != nil {
		t.Fatal(err)
	}
	if m["www.a.gov.test"] != "127.0.0.1:18081" || m["www.b.gov.test"] != "127.0.0.2:18081" || len(m) != 2 {
		t.Errorf("got %v", m)
	}
	if m.String() != "www.a.gov.test=127.0.0.1:18081,www.b.gov.test=127.0.0.2:18081" {
		t.Errorf("String() = %q", m.String())
	}
	if m, err := ParseResolveMap(""); err != nil || len(m) != 0 {
		t.Errorf("empty: %v, %v", m, err)
	}
	for _, bad := range []string{
		"www.a.gov.test",
		"www.a.gov.test=127.0.0.1",
		"www.a.gov.test=localhost:80",
		"=127.0.0.1:80",
		"www.a.gov.test=127.0.0.1:0",
		"ok.gov.test=127.0.0.1:1,www.a.gov.test=127.0.0.1:99999",
		"a.gov.test=127.0.0.1:1,a.gov.test=127.0.0.2:1",
	} {
		_, err := ParseResolveMap(bad)
		if err == nil {
			t.Errorf("ParseResolveMap(%q) accepted", bad)
			continue
		}
		// The message names the bad entry, not the whole list.
		last := bad[strings.LastIndex(bad, ",")+1:]
		if !strings.Contains(err.Error(), last) {
			t.Errorf("error %q does not name the entry %q", err, last)
		}
	}
}

func TestAddrRefusal(t *testing.T) {
	allowed := []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "64:ff9b::5db8:d822"}
	for _, a := range allowed {
		if r := AddrRefusal(netip.MustParseAddr(a)); r != "" {
			t.Errorf("AddrRefusal(%s) = %q, want allowed", a, r)
		}
	}
}

// TestGuardRefuses is the SSRF table: every case must be refused, with the
// reason a user would read. Decisions go through the injected resolver; the
// real dialer is wrapped to reach loopback only.
func TestGuardRefuses(t *testing.T) {
	tests := ssrftest.Cases
	g := &Guard{
		Resolve:  ResolveMap{"www.a.gov.test": "127.0.0.1:1"},
		LookupIP: fakeDNS(t, testDNS),
		Dial:     loopbackOnlyDial(t, nil),
	}
	client := g.NewClient(DefaultLimits)
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tt.URL, nil)
			if err != nil {
				t.Fatalf("bad test URL: %v", err)
			}
			// Through Do: CheckURL first.
			_, err = g.Do(context.Background(), client, req, DefaultLimits)
			assertRefused(t, err, tt.Reason)
			// And straight to the transport, skipping CheckURL: the dialer
			// must refuse on its own (it is what redirects and DNS
			// rebinding meet).
			if req.URL.Scheme == "http" && req.URL.User == nil {
				_, err = client.Transport.RoundTrip(req)
				assertRefused(t, err, tt.Reason)
			}
		})
	}
}

func assertRefused(t *testing.T, err error, reason string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want *RefusedError", err)
	}
	if !strings.Contains(re.Reason, reason) {
		t.Errorf("reason %q, want it to contain %q (message %q)", re.Reason, reason, re.Error())
	}
	if !strings.HasPrefix(err.Error(), "refused: ") && !strings.Contains(err.Error(), ": refused: ") {
		t.Errorf("message %q does not say refused", err)
	}
}

func TestRefusedErrorMessage(t *testing.T) {
	g := &Guard{LookupIP: fakeDNS(t, testDNS), Dial: loopbackOnlyDial(t, nil)}
	_, err := g.DialContext(context.Background(), "tcp", "www.x.gov.test:80")
	if err == nil || err.Error() != "refused: www.x.gov.test resolves to private address 10.1.2.3" {
		t.Errorf("got %v", err)
	}
	err = g.CheckURL(&url.URL{Scheme: "http", Host: "0177.0.0.1"})
	if err == nil || err.Error() != "refused: 0177.0.0.1 resolves to loopback address 127.0.0.1" {
		t.Errorf("got %v", err)
	}
}

// TestGuardRedirects follows a loopback site, reached through the resolve
// map, that redirects to forbidden places: each hop is refused, and the
// forbidden target is never dialled.
func TestGuardRedirects(t *testing.T) {
	targets := []struct {
		to     string
		reason string
	}{
		{"http://10.0.0.1/", "private address"},
		{"http://192.168.1.1/admin", "private address"},
		{"http://127.0.0.1/", "loopback address"},
		{"http://2130706433/", "loopback address"},
		{"http://0x7f.1/", "loopback address"},
		{"http://[::1]/", "loopback address"},
		{"http://[::ffff:10.0.0.1]/", "private address (IPv4-mapped)"},
		{"http://169.254.169.254/latest/meta-data/", "metadata address"},
		{"http://100.100.100.200/", "carrier-grade NAT address"},
		{"http://www.x.gov.test/", "private address"},
		{"http://rebind.gov.test/", "private address"},
		{"http://loop.gov.test/", "loopback address"},
		{"ftp://public.gov.test/", "scheme"},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var dialed atomic.Int32
	g := &Guard{
		Resolve:  ResolveMap{"www.a.gov.test": srv.Listener.Addr().String()},
		LookupIP: fakeDNS(t, testDNS),
		Dial:     loopbackOnlyDial(t, &dialed),
	}
	client := g.NewClient(DefaultLimits)

	// The pinned host itself is reachable, on loopback, with its Host header.
	req, _ := http.NewRequest(http.MethodGet, "http://www.a.gov.test/ok", nil)
	resp, err := g.Do(context.Background(), client, req, DefaultLimits)
	if err != nil || string(resp.Body) != "ok" {
		t.Fatalf("pinned host: %v, %+v", err, resp)
	}

	for _, tt := range targets {
		t.Run(tt.to, func(t *testing.T) {
			before := dialed.Load()
			u := "http://www.a.gov.test/go?to=" + url.QueryEscape(tt.to)
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			_, err := g.Do(context.Background(), client, req, DefaultLimits)
			assertRefused(t, err, tt.reason)
			// At most the redirecting server was dialled (or a kept-alive
			// connection reused); the target never.
			if n := dialed.Load() - before; n > 1 {
				t.Errorf("%d dials for one redirect", n)
			}
		})
	}
}

// TestGuardDialRebinding: the check happens on every connection, so a name
// that resolved to a public address earlier and to a private one now is
// refused now.
func TestGuardDialRebinding(t *testing.T) {
	var calls atomic.Int32
	g := &Guard{
		LookupIP: func(ctx context.Context, host string) ([]net.IP, error) {
			if calls.Add(1) == 1 {
				return []net.IP{net.ParseIP("93.184.216.34")}, nil
			}
			return []net.IP{net.ParseIP("10.0.0.5")}, nil
		},
		// The first answer is public and would be dialled for real: the
		// test dialer refuses it without a packet, which is what we expect.
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != "93.184.216.34:80" {
				t.Errorf("dialled %s", addr)
			}
			return nil, errors.New("test dialer: not dialling public addresses")
		},
	}
	if _, err := g.DialContext(context.Background(), "tcp", "flip.gov.test:80"); err == nil || errors.As(err, new(*RefusedError)) {
		t.Fatalf("first dial: %v, want a plain dial error", err)
	}
	_, err := g.DialContext(context.Background(), "tcp", "flip.gov.test:80")
	assertRefused(t, err, "private address")
}

func TestCheckURLAllows(t *testing.T) {
	g := &Guard{Resolve: ResolveMap{"www.a.gov.test": "127.0.0.1:18081"}}
	for _, u := range []string{
		"http://www.gd.gov.test/zwgk/",
		"https://www.gd.gov.test/",
		"http://93.184.216.34/",
		"http://www.a.gov.test:18081/x", // pinned: port comes from the map
		"http://www.gd.gov.test:18081/", // a resolve-map port is allowed
		"http://1.2.3.4.example.test/",  // a name, not an address
	} {
		pu, _ := url.Parse(u)
		if err := g.CheckURL(pu); err != nil {
			t.Errorf("CheckURL(%s) = %v", u, err)
		}
	}
}
