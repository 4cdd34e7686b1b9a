package sim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// HTTPClient is a plain client for tests and benchmarks that reaches the
// world's hosts through its resolve map only — any other address is
// refused, so nothing using it can leave loopback. It does not follow
// redirects and asks for no compression. It is NOT the polite fetcher:
// zhizhi itself always goes through internal/fetch.
func (w *World) HTTPClient() *http.Client {
	m := w.ResolveMap()
	tr := &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			target, ok := m[host]
			if !ok {
				return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("%s is not a host of the simulated web", host)}
			}
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		},
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
