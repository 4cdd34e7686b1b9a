// Populate and its Corpus fill a store's corpus for the API's tests (the
// package's doc comment is in corpustest.go, which the console's tests
// share): the simulated web crawled, its full-access articles taken in,
// a release built, verified and activated.

package corpustest

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// DefaultSites are the simulated sites Populate crawls when given none: a
// full-access county site whose works are public information (releasable)
// and the national reference site (held back for its rights).
var DefaultSites = []string{"lianzhou", "gov_ref"}

// Corpus is a populated corpus.
type Corpus struct {
	Service *corpus.Service
	World   *crawltest.World
	Store   *store.Store
	// Intake is what taking every ready full-access article in did.
	Intake corpus.RunSummary
	// Release is the version built, verified and activated.
	Release string

	copies int // Duplicate's copies so far, for their addresses
}

// configDir is the bundled configuration, found from this file so that a
// test of any package can use it.
func configDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("corpustest: cannot locate the bundled configuration")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "demo", "config")
}

// Populate crawls the simulated web's sites (DefaultSites when none) into
// st, takes every ready article of a full-access site into the corpus as
// actor "user:tester", and builds, verifies and activates a release.
func Populate(t testing.TB, st *store.Store, sites ...string) *Corpus {
	t.Helper()
	ctx := context.Background()
	if len(sites) == 0 {
		sites = DefaultSites
	}
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: configDir(t), Sim: sim.Options{Seed: 1}})
	Crawl(t, w, sites...)
	svc := corpus.New(st, "test")
	sum, err := svc.IntakeTargets(ctx, nil, "user:tester", nil)
	if err != nil {
		t.Fatalf("corpustest: intake: %v", err)
	}
	if len(sum.Failures) > 0 || sum.NewWorks == 0 {
		t.Fatalf("corpustest: intake took in %d works, failures %+v", sum.NewWorks, sum.Failures)
	}
	c := &Corpus{Service: svc, World: w, Store: st, Intake: sum}
	c.Release = c.Publish(t)
	return c
}

// Publish builds, verifies and activates a new release of the corpus as
// it is now, and returns its version.
func (c *Corpus) Publish(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	res, err := c.Service.Build(ctx, "user:tester", nil)
	if err != nil {
		t.Fatalf("corpustest: build: %v", err)
	}
	if err := c.Service.Verify(ctx, res.Version, "user:tester", corpus.VerifyOptions{}, nil); err != nil {
		t.Fatalf("corpustest: verify %s: %v", res.Version, err)
	}
	if _, err := c.Service.Activate(ctx, res.Version, "user:tester"); err != nil {
		t.Fatalf("corpustest: activate %s: %v", res.Version, err)
	}
	return res.Version
}

// Duplicate stores a copy of article id under another address (the same
// page, text and attributes, as a site that publishes a document twice
// would) and takes the copy in, which opens an exact-duplicate candidate
// against the original's work. It returns the new work's id.
func (c *Corpus) Duplicate(t testing.TB, id int64) string {
	t.Helper()
	ctx := context.Background()
	a, err := c.Store.ArticleByID(ctx, id)
	if err != nil {
		t.Fatalf("corpustest: article %d: %v", id, err)
	}
	cp := *a
	cp.ID, cp.URLHash, cp.NativePostID = 0, "", ""
	c.copies++
	cp.URL = a.URL + "?copy=" + strconv.Itoa(c.copies)
	if _, _, err := c.Store.SaveArticle(ctx, &cp, nil, 0, store.FrontierMark{}); err != nil {
		t.Fatalf("corpustest: copy of article %d: %v", id, err)
	}
	res, err := c.Service.IntakeArticle(ctx, cp.ID, "user:tester")
	if err != nil {
		t.Fatalf("corpustest: intake of the copy of article %d: %v", id, err)
	}
	if res.Candidates == 0 {
		t.Fatalf("corpustest: the copy of article %d opened no duplicate candidate: %+v", id, res)
	}
	return res.WorkID
}
