package server

import (
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestServeHTTPServerHasLimits: serve's HTTP server bounds every phase of a
// connection (a client that sends slowly, never reads or idles cannot hold
// a connection for ever), and leaves a console dry-run, which fetches a
// site at its polite rate while the page waits, at least two minutes to
// answer.
func TestServeHTTPServerHasLimits(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler(), slog.Default())
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		if d <= 0 {
			t.Errorf("%s is unset: a connection may be held for ever", name)
		}
	}
	if srv.WriteTimeout < 2*time.Minute {
		t.Errorf("WriteTimeout %s cuts a dry-run short; want at least 2m", srv.WriteTimeout)
	}
	if srv.ReadHeaderTimeout > 30*time.Second {
		t.Errorf("ReadHeaderTimeout %s lets a slow client hold a connection; want at most 30s", srv.ReadHeaderTimeout)
	}
}
