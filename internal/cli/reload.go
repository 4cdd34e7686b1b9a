package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// liveConfig is serve's configuration, kept up to date with `config sync`:
// b was loaded from the configuration directory when the database was at
// generation, and client's site policies and alerter's alerts.yaml follow
// every reload.
func liveConfig(st *store.Store, b *config.Bundle, generation int64, client *fetch.Client, alerter *alert.Alerter) (*config.Live, error) {
	rm, err := resolveMap()
	if err != nil {
		return nil, err
	}
	return config.NewLive(b, generation, config.LiveOptions{
		Dir: settings.ConfigDir, Load: config.Options{Resolve: rm}, Store: st, Log: slog.Default(),
		Apply: func(ctx context.Context, nb *config.Bundle) error {
			if err := client.LoadSitePolicies(ctx, crawl.Resilience(nb)); err != nil {
				return err
			}
			reconfigureAlerts(alerter, nb.Alerts)
			return nil
		},
	}), nil
}

// reconfigureAlerts puts a reloaded alerts.yaml in force. One that could
// not deliver (an environment variable not set) keeps the previous one,
// and says so: the sites' changes still apply.
func reconfigureAlerts(a *alert.Alerter, cfg *config.Alerts) {
	if a == nil {
		return
	}
	was := a.Config()
	if err := a.Reconfigure(cfg); err != nil {
		slog.Warn("alerts.yaml not put in force; the previous alert settings stay", "err", err)
		return
	}
	switch {
	case cfg == nil && was != nil:
		slog.Warn("alerts.yaml is gone: no alerts are sent until it is back", "dir", settings.ConfigDir)
	case cfg != nil:
		slog.Info("alert settings in force", "file", cfg.File, "webhooks", len(cfg.Webhooks))
	}
}

// watchConfig looks for a new configuration generation every interval and
// reads the directory again on every signal from hup, until ctx ends. The
// crawl jobs look too, as each starts; this is for the site policies of
// the jobs already running, and for a process with nothing to do.
func watchConfig(ctx context.Context, live *config.Live, every time.Duration, hup <-chan os.Signal) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-hup:
			slog.Info("SIGHUP: reading the configuration again", "dir", settings.ConfigDir)
			err = live.Reload(ctx)
		case <-t.C:
			err = live.Check(ctx)
		}
		// A configuration that does not load was reported by live itself.
		if err != nil && !errors.Is(err, config.ErrReloadFailed) && ctx.Err() == nil {
			slog.Warn("look for a new configuration", "err", err)
		}
	}
}
