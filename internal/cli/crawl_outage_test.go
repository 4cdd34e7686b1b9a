package cli

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store"
)

// TestCrawlExitsTwoWhenTheDatabaseStaysAway: another writer takes the
// SQLite database's write lock while `zhizhi crawl` stores a target's
// articles, and keeps it. The crawl waits for the database (2 minutes),
// then exits 2 saying it could not finish because the database is
// unreachable — never 0, and no article is marked failed for it. Run
// again with the database free, the crawl finishes with exit 0.
func TestCrawlExitsTwoWhenTheDatabaseStaysAway(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and waits out the crawl's 2 minutes for the database")
	}
	waitBound(t)
	db := newCrawledDB(t, false)
	ctx := context.Background()
	p := spawnZhizhi(t, slices.Clone(db.env), "crawl", "--target", "lianzhou_tzgg")
	const host = "www.lianzhou.gov.test"
	for deadline := time.Now().Add(5 * time.Minute); ; { // a safety net, not a measure
		n := 0
		for _, a := range db.world.Sim.AccessLog(host) {
			if strings.HasSuffix(a.Path, ".html") && strings.Contains(a.Path, "/tzgg/2") {
				n++
			}
		}
		if n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			p.kill()
			t.Fatalf("the crawl fetched no article within 5 minutes:\n%s", p.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	other, err := sql.Open("sqlite", "file:"+db.dir+"/zhizhi.db?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()
	var code int
	select {
	case err := <-p.done:
		code = exitStatus(err)
	case <-time.After(10 * time.Minute): // a safety net, not a measure
		p.cmd.Process.Kill()
		t.Fatalf("the crawl did not end within 10 minutes of the database being locked:\n%s", p.output())
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d %s after the lock was taken", code, time.Since(locked).Round(time.Second))
	if code != 2 || !strings.Contains(p.output(), "could not finish: database unreachable") {
		t.Fatalf("exit %d, want 2 saying the database is unreachable:\n%s", code, p.output())
	}
	tg, err := db.st.TargetByCode(ctx, "lianzhou_tzgg")
	if err != nil {
		t.Fatal(err)
	}
	counts, err := db.st.FrontierCounts(ctx, tg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.FrontierFailed] != 0 {
		t.Errorf("links marked failed while the database was locked: %v", counts)
	}
	r := runZhizhi(t, db.env, "crawl", "--target", "lianzhou_tzgg")
	if r.code != 0 {
		t.Fatalf("the crawl run again with the database free: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
