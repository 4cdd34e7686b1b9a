// Package corpustest is for tests only: it fills a store's corpus from
// the simulated web the way an operator does — crawl some sites, take
// their ready articles in, build, verify and activate a release — so the
// packages that show or serve the corpus test against a real one.
package corpustest

import (
	"context"
	"testing"

	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
)

// Crawl runs every enabled target of the simulated web's sites of the
// given codes (site_code) into w's store, failing the test on a failed
// target.
func Crawl(t testing.TB, w *crawltest.World, sites ...string) {
	t.Helper()
	ctx := context.Background()
	want := map[string]bool{}
	for _, s := range sites {
		want[s] = true
	}
	var targets []model.Target
	for _, tg := range w.Targets(t, false) {
		s, err := w.Store.SiteByID(ctx, tg.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		if want[s.SiteCode] {
			targets = append(targets, tg)
		}
	}
	if len(targets) == 0 {
		t.Fatalf("corpustest: no enabled targets of %v", sites)
	}
	for _, r := range w.Crawler(nil).Run(ctx, targets) {
		if r.Err != nil {
			t.Fatalf("corpustest: target %s: %v", r.TargetCode, r.Err)
		}
	}
}

// Release takes every ready article of the full-access sites in as actor,
// builds a release, verifies and activates it, and returns its version.
func Release(t testing.TB, svc *corpus.Service, actor string) string {
	t.Helper()
	ctx := context.Background()
	sum, err := svc.IntakeTargets(ctx, nil, actor, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) > 0 {
		t.Fatalf("corpustest: intake failures: %+v", sum.Failures)
	}
	res, err := svc.Build(ctx, actor, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Verify(ctx, res.Version, actor, corpus.VerifyOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Activate(ctx, res.Version, actor); err != nil {
		t.Fatal(err)
	}
	return res.Version
}
