package cli

import (
	"net/http"

	"zhizhi/internal/acquire"
	"zhizhi/internal/budget"
	"zhizhi/internal/corpus"
	"zhizhi/internal/mcp"
	"zhizhi/internal/server"
)

// acquireAPI is the acquisition API serve mounts on /v1/ and /v2/:
// the same store and polite client as the crawl workers, each API key's
// budgets kept in that store, renders in the workers' browser tier, crawl
// jobs on the workers' queue.
// It also gives the API's own mux, which takes its caller from the
// request's context (the MCP server's fetch).
func acquireAPI(d server.Deps) (served http.Handler, bare http.Handler, err error) {
	b := budget.New(d.Store, nil)
	// /v1/render draws pages with the crawl workers' browser tier; a
	// serve without Chromium answers it 503 BROWSER_UNAVAILABLE.
	// Crawl jobs go on serve's job queue, worked by whichever process
	// takes them up, each page through the same polite client.
	a, err := acquire.New(acquire.Deps{Store: d.Store, Client: d.Fetch, Logger: d.Logger, Budget: b,
		Render: &acquire.RenderTier{}, Jobs: d.Queue})
	if err != nil {
		return nil, nil, err
	}
	d.Queue.RunCrawlJobs(a)
	return a.Served(d.Auth, b), a.Handler(), nil
}

// serveAPIs is what serve mounts besides the console and the portal: the
// acquisition API on /v1/ and /v2/, and the MCP server on /mcp, whose
// fetch tool goes through that same acquisition API.
func serveAPIs() (acq, mcpH func(server.Deps) (http.Handler, error)) {
	var bare http.Handler
	acq = func(d server.Deps) (http.Handler, error) {
		h, b, err := acquireAPI(d)
		bare = b
		return h, err
	}
	mcpH = func(d server.Deps) (http.Handler, error) {
		be := &mcp.Zhizhi{Corpus: corpus.New(d.Store, Version), Acquire: bare}
		return mcp.HTTPHandler(be, d.Auth, mcp.Options{Version: Version, Logger: d.Logger}), nil
	}
	return acq, mcpH
}
