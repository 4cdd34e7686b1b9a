package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// chromiumAvailable reports whether the configured browser binary exists.
func chromiumAvailable() bool {
	st, err := os.Stat(settings.Chromium)
	return err == nil && !st.IsDir()
}

// newClient builds the polite fetcher: the resolve map from ZHIZHI_RESOLVE,
// every site's policy from the database and its adapter's resilience rules
// from the configuration, and the browser tier when Chromium is installed.
func newClient(ctx context.Context, st *store.Store, b *config.Bundle) (*fetch.Client, error) {
	rm, err := resolveMap()
	if err != nil {
		return nil, err
	}
	opts := clientOptions(rm)
	opts.Store = st
	c, err := crawl.NewClient(ctx, opts, b)
	if err != nil {
		return nil, exitCode(1, err.Error())
	}
	return c, nil
}

// clientOptions are the polite client's settings from the command line:
// the resolve map rm, the User-Agent, and the browser tier when Chromium is
// installed. The store is the caller's.
func clientOptions(rm fetch.ResolveMap) fetch.ClientOptions {
	opts := fetch.ClientOptions{Resolve: rm, Version: Version, ContactURL: settings.ContactURL, Logger: slog.Default()}
	if chromiumAvailable() {
		opts.Browser = fetch.Chromium(settings.Chromium, slog.Default())
	}
	return opts
}

// resolveMap is ZHIZHI_RESOLVE / --resolve, parsed.
func resolveMap() (fetch.ResolveMap, error) {
	rm, err := fetch.ParseResolveMap(settings.Resolve)
	if err != nil {
		return nil, exitCode(2, fmt.Sprintf("ZHIZHI_RESOLVE / --resolve: %v", err))
	}
	return rm, nil
}

// loadConfig loads a configuration directory knowing the resolve map,
// which decides where owned: true is allowed.
func loadConfig(dir string) (*config.Bundle, []config.Problem, error) {
	return loadConfigWith(dir, nil)
}

// loadConfigWith is loadConfig counting depts (the database's departments,
// nil when not looked at) as known besides config/departments.csv.
func loadConfigWith(dir string, depts map[int64]bool) (*config.Bundle, []config.Problem, error) {
	if err := needConfigDir(dir); err != nil {
		return nil, nil, err
	}
	rm, err := resolveMap()
	if err != nil {
		return nil, nil, err
	}
	b, problems := config.LoadWith(dir, config.Options{Resolve: rm, Departments: depts})
	return b, problems, nil
}

// loadBundle loads the configuration directory, refusing one with errors
// (exit 2: a configuration error, nothing was done).
func loadBundle() (*config.Bundle, error) {
	b, problems, err := loadConfig(settings.ConfigDir)
	if err != nil {
		return nil, err
	}
	if msg := config.Refusal(settings.ConfigDir, problems); msg != "" {
		return nil, exitCode(2, msg)
	}
	return b, nil
}

// politeGet fetches one URL through the whole polite stack.
func politeGet(ctx context.Context, rawURL string) (*fetch.Response, error) {
	st, err := openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	b, _ := config.Load(settings.ConfigDir) // policies only; a broken config still lets one fetch through
	c, err := newClient(ctx, st, b)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(ctx, fetch.Request{URL: rawURL, Purpose: model.PurposeProbe})
}

// noConfigDirMsg is what a command that needs the configuration says when
// none was chosen: there is no default, so an operator's sites are never
// mixed up with the simulated web's.
const noConfigDirMsg = "no configuration directory: set ZHIZHI_CONFIG_DIR (or --config-dir DIR) to yours, " +
	"or write a starting one with `zhizhi init DIR`"

// needConfigDir refuses (exit 2) when no configuration directory was chosen.
func needConfigDir(dir string) error {
	if dir == "" {
		return exitCode(2, noConfigDirMsg)
	}
	return nil
}
