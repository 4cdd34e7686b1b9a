package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"zhizhi/internal/store"
)

// newHTTPServer is serve's HTTP server. Every phase of a connection has a
// limit, so a client that sends slowly or never reads cannot hold a
// connection and its goroutine forever. The write limit is generous: the
// slowest answers are the console's dry-runs and previews, which fetch a
// site at its polite rate while the page waits.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,     // bodies are forms, CSV and YAML uploads
		WriteTimeout:      5 * time.Minute, // a dry-run at one request every few seconds
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// probeMux answers /healthz and /readyz. configTrouble says why the
// configuration directory did not load at the last reload ("" when it
// did); it does not make serve unready, which goes on with the last good
// one.
func probeMux(st *store.Store, ready *atomic.Bool, configTrouble func() string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: job queue not running (starting or stopping)")
			return
		}
		if err := st.DB().PingContext(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: database does not answer: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ready")
		if msg := configTrouble(); msg != "" {
			fmt.Fprintf(w, "configuration: the last reload failed, still working with the last good one: %s\n", msg)
		}
	})
	return mux
}
