package crawl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestContinuedCrawlSkipsItsWalk: a crawl stopped after its list walk
// (its budget ran out while it fetched articles) and continued with
// WalkedSince set to when it began asks for no list page again — only the
// links still due — and finishes the target. Started afresh (WalkedSince
// after the walk), a crawl walks the lists.
func TestContinuedCrawlSkipsItsWalk(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	ctx := context.Background()
	tg, err := st.TargetByCode(ctx, "lianzhou_tzgg")
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	drain := make(chan struct{})
	var once sync.Once
	c := w.w.Crawler(nil)
	c.Drain = drain
	c.Progress = func(e crawl.Event) {
		if e.Kind == "article" {
			once.Do(func() { close(drain) }) // the budget runs out at the first article
		}
	}
	first := c.CrawlTarget(ctx, *tg)
	if !first.Interrupted || first.Pending == 0 {
		t.Fatalf("the first part: interrupted %v with %d links pending; the test needs a stop after the walk", first.Interrupted, first.Pending)
	}

	w.sim.ResetLog()
	c = w.w.Crawler(nil)
	c.WalkedSince = &began
	second := c.CrawlTarget(ctx, *tg)
	if second.Err != nil || second.Pending != 0 {
		t.Fatalf("the continued crawl: err %v, %d links pending", second.Err, second.Pending)
	}
	details := detailPaths(w.sim.Truth())
	fetched := 0
	for _, acc := range w.sim.AllAccess() {
		switch {
		case acc.Path == "/robots.txt":
		case details[acc.Host][acc.Path]:
			fetched++
		default:
			t.Errorf("the continued crawl asked for a list page again: %s%s", acc.Host, acc.Path)
		}
	}
	if fetched == 0 {
		t.Error("the continued crawl fetched no article")
	}
	counts, err := st.FrontierCounts(ctx, tg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.FrontierNew]+counts[store.FrontierFailed] != 0 {
		t.Errorf("frontier left undone: %v", counts)
	}

	// A crawl queued after that walk walks again.
	w.sim.ResetLog()
	later := time.Now()
	c = w.w.Crawler(nil)
	c.WalkedSince = &later
	if r := c.CrawlTarget(ctx, *tg); r.Err != nil {
		t.Fatal(r.Err)
	}
	lists := 0
	for _, acc := range w.sim.AllAccess() {
		if acc.Path != "/robots.txt" && !details[acc.Host][acc.Path] {
			lists++
		}
	}
	if lists == 0 {
		t.Error("a crawl queued after the last walk did not walk the lists")
	}
}
