package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// liveConfig is serve's configuration, kept up to date with `config sync`:
// b was loaded from the configuration directory when the database was at
// generation, and client's site policies follow every reload.
func liveConfig(st *store.Store, b *config.Bundle, generation int64, client *fetch.Client) (*config.Live, error) {
	rm, err := resolveMap()
	if err != nil {
		return nil, err
	}
	return config.NewLive(b, generation, config.LiveOptions{
		Dir: settings.ConfigDir, Load: config.Options{Resolve: rm}, Store: st, Log: slog.Default(),
		Apply: func(ctx context.Context, nb *config.Bundle) error {
			return client.LoadSitePolicies(ctx, crawl.Resilience(nb))
		},
	}), nil
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
