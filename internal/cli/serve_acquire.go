package cli

import (
	"net/http"

	"zhizhi/internal/acquire"
	"zhizhi/internal/budget"
	"zhizhi/internal/server"
)

// acquireHandler is the acquisition API serve mounts on /v1/ and /v2/:
// the same store and polite client as the crawl workers, each API key's
// budgets kept in that store, renders in the workers' browser tier, crawl
// jobs on the workers' queue.
func acquireHandler(d server.Deps) (http.Handler, error) {
	b := budget.New(d.Store, nil)
	// /v1/render draws pages with the crawl workers' browser tier; a
	// serve without Chromium answers it 503 BROWSER_UNAVAILABLE.
	// Crawl jobs go on serve's job queue, worked by whichever process
	// takes them up, each page through the same polite client.
	a, err := acquire.New(acquire.Deps{Store: d.Store, Client: d.Fetch, Logger: d.Logger, Budget: b,
		Render: &acquire.RenderTier{}, Jobs: d.Queue})
	if err != nil {
		return nil, err
	}
	d.Queue.RunCrawlJobs(a)
	return a.Served(d.Auth, b), nil
}
