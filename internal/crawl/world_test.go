package crawl_test

import (
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

const configDir = "../../demo/config"

// world is the simulated web, a store synced with the bundled config and a
// polite client that treats the simulation's hosts as owned (fast); the
// set-up and the scoring live in crawltest, shared with the CLI tests.
type world struct {
	sim    *sim.World
	st     *store.Store
	bundle *config.Bundle
	client *fetch.Client
	w      *crawltest.World
}

func chromium(t testing.TB) bool { return crawltest.Chromium(t) }

func newWorld(t testing.TB, st *store.Store, browser bool) *world {
	t.Helper()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: configDir, Browser: browser, Sim: sim.Options{Seed: 1}})
	return &world{sim: w.Sim, st: st, bundle: w.Bundle, client: w.Client, w: w}
}

// crawl runs every enabled target (without the city portal's when there
// is no browser) and fails the test on a failed target.
func (w *world) crawl(t testing.TB, now func() time.Time, browser bool) []crawl.Result {
	t.Helper()
	return w.w.Crawl(t, now, browser)
}
