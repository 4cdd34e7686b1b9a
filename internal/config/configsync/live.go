package configsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/store"
)

// ErrReloadFailed is returned when the configuration directory no longer
// loads: the last good bundle stays in use.
var ErrReloadFailed = errors.New("configuration does not load; the last good one stays in use")

// LiveOptions configure a Live configuration.
type LiveOptions struct {
	// Dir is the configuration directory read again on every reload.
	Dir string
	// config.Load is what loading needs to know (the resolve map).
	Load config.Options
	// Store holds the configuration generation that `config sync` counts.
	Store *store.Store
	// Apply puts what the database now says into effect before any job
	// sees the new bundle: the fetch client's site policies (robots.txt,
	// rate, tier), so a stricter one applies to the next request. It gets
	// the new bundle, or the last good one when the files no longer load
	// (the sites in the database may still have changed). An error keeps
	// the previous bundle; the next check tries again.
	Apply func(ctx context.Context, b *config.Bundle) error
	Log   *slog.Logger
}

// Live is the configuration a long-running process works with: the last
// bundle that loaded without errors, read again from the directory when
// `config sync` (run anywhere, against the same database) has counted a new
// generation, or when the process is asked to (SIGHUP). A bundle is never
// changed once loaded, so a job that took one works with the same sites,
// templates and adapters to its end, while jobs that start afterwards get
// the new one. A directory that no longer loads leaves the last good bundle
// in use and is reported once per attempt, with the file and line.
type Live struct {
	opts LiveOptions

	cur     atomic.Pointer[liveBundle]
	seen    atomic.Int64 // the generation last acted on, loaded or not
	failure atomic.Pointer[string]

	mu sync.Mutex // one reload at a time
}

type liveBundle struct {
	b          *config.Bundle
	generation int64
	loadedAt   time.Time
}

// NewLive starts from b, loaded from opts.Dir when the database was at
// generation (read before loading, so a sync racing with the start is
// caught at the first check).
func NewLive(b *config.Bundle, generation int64, opts LiveOptions) *Live {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	l := &Live{opts: opts}
	l.cur.Store(&liveBundle{b: b, generation: generation, loadedAt: time.Now()})
	l.seen.Store(generation)
	return l
}

// config.Bundle returns the bundle in use, without looking for a new one.
func (l *Live) Bundle() *config.Bundle { return l.cur.Load().b }

// Generation is the configuration generation of the bundle in use.
func (l *Live) Generation() int64 { return l.cur.Load().generation }

// Current looks for a new generation (one small query), reloads when there
// is one, and returns the bundle a job starting now works with. A job calls
// it once and keeps what it got. When the database does not answer, the
// bundle in use is returned: the job meets the same database soon enough.
func (l *Live) Current(ctx context.Context) *config.Bundle {
	_ = l.Check(ctx)
	return l.Bundle()
}

// Check reloads when `config sync` has counted a generation this process
// has not acted on yet.
func (l *Live) Check(ctx context.Context) error {
	g, err := l.opts.Store.ConfigGeneration(ctx)
	if err != nil {
		return err
	}
	if g == l.seen.Load() {
		return nil
	}
	return l.reload(ctx, g, false)
}

// Reload reads the directory again whatever the generation (SIGHUP: files
// edited on this machine without a sync, or fixed after a failed reload).
func (l *Live) Reload(ctx context.Context) error {
	g, err := l.opts.Store.ConfigGeneration(ctx)
	if err != nil {
		return err
	}
	return l.reload(ctx, g, true)
}

// Failure says why the last reload did not take, or "" when the bundle in
// use is what the directory holds.
func (l *Live) Failure() string {
	if f := l.failure.Load(); f != nil {
		return *f
	}
	return ""
}

func (l *Live) reload(ctx context.Context, generation int64, force bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !force && generation == l.seen.Load() {
		return nil // another job's check got here first
	}
	old := l.cur.Load()
	b, problems := config.LoadWith(l.opts.Dir, l.opts.Load)
	if bad := l.refuse(b, problems, old.b); bad != "" {
		// The sites in the database may have changed all the same (a sync
		// from another machine): their politeness rules apply now.
		if l.opts.Apply != nil {
			if err := l.opts.Apply(ctx, old.b); err != nil {
				return fmt.Errorf("reload configuration: %w", err)
			}
		}
		l.seen.Store(generation)
		l.failure.Store(&bad)
		l.opts.Log.Warn("configuration reload failed; still working with the last good configuration — fix the file, then run `zhizhi config sync` or send SIGHUP",
			"dir", l.opts.Dir, "problem", bad, "in_use_generation", old.generation,
			"in_use_since", old.loadedAt.Format(time.RFC3339))
		return fmt.Errorf("%w: %s", ErrReloadFailed, bad)
	}
	if l.opts.Apply != nil {
		if err := l.opts.Apply(ctx, b); err != nil {
			return fmt.Errorf("reload configuration: %w", err)
		}
	}
	l.cur.Store(&liveBundle{b: b, generation: generation, loadedAt: time.Now()})
	l.seen.Store(generation)
	l.failure.Store(nil)
	l.opts.Log.Info("configuration reloaded", "dir", l.opts.Dir, "generation", generation,
		"sites", len(b.Sites), "adapters", len(b.CMS))
	return nil
}

// refuse says why a freshly loaded bundle must not replace the one in use
// ("" when it may): errors in the files, or no site file at all where
// there were some (far more likely a directory that went missing than a
// wish to stop crawling everything).
func (l *Live) refuse(b *config.Bundle, problems []config.Problem, old *config.Bundle) string {
	if errs := config.Errors(problems); len(errs) > 0 {
		msg := errs[0].String()
		if len(errs) > 1 {
			msg += fmt.Sprintf(" (and %d more; see `zhizhi config lint`)", len(errs)-1)
		}
		return msg
	}
	if len(b.Sites) == 0 && len(old.Sites) > 0 {
		return filepath.Join(l.opts.Dir, config.SitesDir) + " holds no site file — check ZHIZHI_CONFIG_DIR"
	}
	return ""
}
