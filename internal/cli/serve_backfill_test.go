package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// backfillStopped is what serve says when SIGTERM ends the card backfill
// before it is done, with how many cards it made.
var backfillStopped = regexp.MustCompile(`cards of stored articles stopped with serve.*made=(\d+)`)

// TestServeStopsCardBackfillBeforeClosingTheStore: SIGTERM while serve is
// still making the cards of many stored articles. Serve stops the backfill
// and waits for it before it closes the store: it exits 0, nothing says the
// database was closed under it, it says how many cards it made, and every
// one of those is kept. The next start makes the rest.
func TestServeStopsCardBackfillBeforeClosingTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	waitBound(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st) // nothing to crawl: this is about the backfill
	ctx := context.Background()

	// Articles kept before cards existed: ready, with text, no card.
	var siteID, targetID int64
	if err := sw.st.DB().QueryRowContext(ctx, `SELECT s.id, t.id FROM crawl_site s JOIN crawl_target t ON t.site_id = s.id
		WHERE s.access = ? ORDER BY t.id LIMIT 1`, model.AccessFull).Scan(&siteID, &targetID); err != nil {
		t.Fatal(err)
	}
	const articles = 2000
	words := []string{"规划", "财政", "预算", "教育", "卫生", "交通", "农业", "水利", "环境", "住房", "就业", "养老",
		"医疗", "科技", "文化", "旅游", "安全", "应急", "市场", "监管", "税务", "审计", "统计", "民政", "扶贫", "林业"}
	rng := rand.New(rand.NewPCG(1, 2))
	body := func() string {
		var b strings.Builder
		for range 300 {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(8) == 0 {
				b.WriteString("。")
			}
		}
		return b.String()
	}
	fetched := time.Now().UTC().Add(-24 * time.Hour)
	err := sw.st.WithTx(ctx, func(tx *store.Tx) error {
		for i := range articles {
			a := &model.Article{SiteID: siteID, TargetID: targetID,
				URL:   fmt.Sprintf("http://backfill.test/post_%d.html", i),
				Title: fmt.Sprintf("关于第%d号事项的通知", i), ContentText: body(),
				Status: model.StatusReady, FetchStrategy: model.StrategyDirect, FetchedAt: fetched}
			if _, _, err := tx.UpsertArticle(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cards := func() int {
		var n int
		if err := sw.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM summary_card`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	p := sw.startServe(t, sw.dataDir)
	defer func() {
		if t.Failed() {
			t.Logf("serve's output:\n%s", p.output())
		}
	}()
	waitFor(t, 2*time.Minute, "serve makes the first cards", func() bool { return cards() > 0 })
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM during the card backfill, want 0", code)
	}
	out := p.output()
	kept := cards()
	if kept >= articles {
		t.Fatalf("all %d cards were made before SIGTERM; the test needs more articles to stop serve mid-backfill", articles)
	}
	for _, bad := range []string{"database is closed", "not all made"} {
		if strings.Contains(out, bad) {
			t.Errorf("serve's log says %q: the store was closed under the backfill", bad)
		}
	}
	m := backfillStopped.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("serve's log does not say the backfill stopped with serve and how many cards it made")
	}
	if made, _ := strconv.Atoi(m[1]); made != kept {
		t.Errorf("serve says it made %d cards before it stopped; %d are in the database", made, kept)
	}

	// The next start goes on where this one stopped.
	again := sw.startServe(t, sw.dataDir)
	waitFor(t, 5*time.Minute, "the next start makes more cards", func() bool { return cards() > kept })
	if code := again.stop(t); code != 0 {
		t.Errorf("the restarted serve exited %d after SIGTERM:\n%s", code, again.output())
	}
	if out := again.output(); strings.Contains(out, "database is closed") || strings.Contains(out, "not all made") {
		t.Errorf("the restarted serve's log says the store was closed under the backfill:\n%s", out)
	}
}
