package server

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// liveConfig is serve's configuration, kept up to date with `config sync`:
// b was loaded from dir (with load) when the database was at generation,
// and client's site policies and alerter's alerts.yaml follow every reload.
func liveConfig(st *store.Store, b *config.Bundle, generation int64, client *fetch.Client, alerter *alert.Alerter,
	dir string, load config.Options, log *slog.Logger) *configsync.Live {
	return configsync.NewLive(b, generation, configsync.LiveOptions{
		Dir: dir, Load: load, Store: st, Log: log,
		Apply: func(ctx context.Context, nb *config.Bundle) error {
			if err := client.LoadSitePolicies(ctx, crawl.Resilience(nb)); err != nil {
				return err
			}
			reconfigureAlerts(alerter, nb.Alerts, dir, log)
			return nil
		},
	})
}

// reconfigureAlerts puts a reloaded alerts.yaml in force. One that could
// not deliver (an environment variable not set) keeps the previous one,
// and says so: the sites' changes still apply.
func reconfigureAlerts(a *alert.Alerter, cfg *config.Alerts, dir string, log *slog.Logger) {
	if a == nil {
		return
	}
	was := a.Config()
	if err := a.Reconfigure(cfg); err != nil {
		log.Warn("alerts.yaml not put in force; the previous alert settings stay", "err", err)
		return
	}
	switch {
	case cfg == nil && was != nil:
		log.Warn("alerts.yaml is gone: no alerts are sent until it is back", "dir", dir)
	case cfg != nil:
		log.Info("alert settings in force", "file", cfg.File, "webhooks", len(cfg.Webhooks))
	}
}

// watchConfig looks for a new configuration generation every interval and
// reads the directory (dir) again on every signal from hup, until ctx ends.
// The crawl jobs look too, as each starts; this is for the site policies
// of the jobs already running, and for a process with nothing to do.
func watchConfig(ctx context.Context, live *configsync.Live, every time.Duration, hup <-chan os.Signal, dir string, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reading the configuration again", "dir", dir)
			err = live.Reload(ctx)
		case <-t.C:
			err = live.Check(ctx)
		}
		// A configuration that does not load was reported by live itself.
		if err != nil && !errors.Is(err, configsync.ErrReloadFailed) && ctx.Err() == nil {
			log.Warn("look for a new configuration", "err", err)
		}
	}
}
