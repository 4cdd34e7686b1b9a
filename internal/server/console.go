package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"zhizhi/internal/adapter"
	"zhizhi/internal/api"
	"zhizhi/internal/auth"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/queue"
	"zhizhi/internal/review"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
	"zhizhi/internal/ui"
)

// consoleDeps is what the admin console and the API work with.
type consoleDeps struct {
	st       *store.Store
	q        *queue.Queue
	client   *fetch.Client // the polite client the crawl workers use
	live     *configsync.Live
	sessions *auth.Service
	loc      *time.Location // schedules are read in it
	// configDir is read by the console to show the sites' files.
	configDir string
	log       *slog.Logger
	// acquire is the acquisition API as mounted on /v1/, which the
	// console's Studio calls in-process; nil when serve has none.
	acquire http.Handler
	// corpus is the governed corpus the API and the console show.
	corpus *corpus.Service
}

// mountConsole adds the admin console (/admin/) and the REST API
// (/api/v1/) to mux, both signed in through the same users, sessions and
// API keys; / leads to the console.
func mountConsole(mux *http.ServeMux, d consoleDeps) error {
	st := d.st
	// Saving a target with a sample article needs a green dry-run, made
	// with the workers' own polite client and the configuration in force.
	// A catalog column's preview reads its list the same way.
	crawler := func(ctx context.Context) *crawl.Crawler {
		return &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: d.client, Bundle: d.live.Current(ctx), Log: d.log}
	}
	targets := &target.Service{Store: st, Location: d.loc,
		Validate: func(ctx context.Context, site *model.Site, t *model.Target, entry, sample string) (*crawl.Validation, error) {
			return crawler(ctx).Validate(ctx, site, t, entry, sample)
		},
		List: func(ctx context.Context, site *model.Site, t *model.Target) ([]adapter.ListItem, error) {
			return crawler(ctx).PreviewColumn(ctx, site, t)
		}}
	rest := api.New(api.Options{Store: st, Auth: d.sessions, Log: d.log, Targets: targets, Cards: review.Grade,
		Corpus: d.corpus,
		CrawlNow: func(ctx context.Context, targetID int64) error {
			t, err := st.TargetByID(ctx, targetID)
			if err != nil {
				return err
			}
			_, err = d.q.CrawlNow(ctx, *t)
			return err
		}})
	mux.Handle(api.Prefix+"/", rest)
	mux.Handle(api.CDXPath, rest)
	console, err := ui.New(ui.Options{Store: st, Sessions: d.sessions, Jobs: d.q, ConfigDir: d.configDir, Log: d.log,
		Targets: targets, Cards: review.Grade, Location: d.loc,
		Onboard: onboardWizard(d.client, d.live), Acquire: d.acquire, Corpus: d.corpus})
	if err != nil {
		return fmt.Errorf("admin console: %w", err)
	}
	mux.Handle(ui.Prefix+"/", console)
	return nil
}

// onboardWizard gives the onboarding wizard as the console checks it and
// the queue's workers run it: the polite client the crawl workers use and
// the configuration in force.
func onboardWizard(client *fetch.Client, live *configsync.Live) func(ctx context.Context) (*onboard.Wizard, error) {
	return func(ctx context.Context) (*onboard.Wizard, error) {
		return &onboard.Wizard{Fetch: client, Bundle: live.Current(ctx)}, nil
	}
}

// logTargetResult writes one log line per finished job.
func logTargetResult(log *slog.Logger, kind string, t model.Target, r crawl.Result) {
	args := []any{"job", kind, "target", t.TargetCode, "created", r.Created, "updated", r.Updated,
		"unchanged", r.Unchanged, "failed", r.Failed, "pending", r.Pending, "took", r.Finished.Sub(r.Started).Round(time.Millisecond)}
	switch {
	case r.Interrupted:
		log.Info("job paused, goes on later", args...)
	case r.Err != nil:
		log.Warn("job failed", append(args, "err", r.Err)...)
	default:
		log.Info("job done", args...)
	}
}
