package crawl_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// lockableWorld is an SQLite store with the simulated web synced into it,
// the target lianzhou_tzgg, and a second connection pool to the same file
// with which a test takes the database's write lock as another writer would.
func lockableWorld(t *testing.T) (*store.Store, *world, *model.Target, *sql.DB) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "zhizhi.db")
	st, err := store.Open(context.Background(), "sqlite://"+path, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := newWorld(t, st, false)
	tg, err := st.TargetByCode(context.Background(), "lianzhou_tzgg")
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return st, w, tg, other
}

// TestCrawlWaitsOutALockedDatabase: another writer holds the SQLite
// database's write lock for 8 seconds — longer than the 5-second busy
// wait — while a crawl stores its articles (a `sqlite3` session left in a
// transaction, a backup). That is not the site's failure: the crawl waits
// for the database and goes on, and ends with every article of the target
// stored once, no link marked failed and no error.
func TestCrawlWaitsOutALockedDatabase(t *testing.T) {
	st, w, tg, other := lockableWorld(t)
	ctx := context.Background()
	var (
		once     sync.Once
		released = make(chan struct{})
		lockErr  error
	)
	var logs bytes.Buffer
	var logMu sync.Mutex
	c := w.w.Crawler(nil)
	c.Log = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	c.Progress = func(e crawl.Event) {
		if e.Kind != "article" {
			return
		}
		once.Do(func() {
			conn, err := other.Conn(ctx)
			if err == nil {
				_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
			}
			if err != nil {
				lockErr = err
				close(released)
				return
			}
			go func() {
				defer close(released)
				time.Sleep(8 * time.Second)
				_, lockErr = conn.ExecContext(ctx, "COMMIT")
				conn.Close()
			}()
		})
	}
	res := c.CrawlTarget(ctx, *tg)
	<-released
	if lockErr != nil {
		t.Fatalf("the other writer: %v", lockErr)
	}
	if res.Err != nil || res.Interrupted || res.Failed > 0 || res.Retrying > 0 || res.Pending > 0 {
		t.Fatalf("the crawl: err %v, interrupted %v, %d failed, %d waiting for a retry, %d pending; want it done", res.Err, res.Interrupted, res.Failed, res.Retrying, res.Pending)
	}
	counts, err := st.FrontierCounts(ctx, tg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.FrontierFailed] != 0 {
		t.Errorf("links marked failed: %v", counts)
	}
	want := 0
	for _, a := range w.sim.Truth() {
		if a.TargetCode == tg.TargetCode {
			want++
		}
	}
	var stored int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM article WHERE target_id = ?`, tg.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want == 0 || stored != want || res.Created != want {
		t.Errorf("stored %d articles of the target, the run counted %d created; the site has %d", stored, res.Created, want)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "the database does not answer") {
		t.Errorf("the crawl never said it waited for the database:\n%s", logs.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCrawlGivesUpOnADatabaseThatStaysAway: when the database stays
// locked longer than the crawl waits (StoreWait), the crawl ends with an
// error saying the database is unreachable — never as done, never as
// interrupted — and marks no link failed: the site is not to blame.
func TestCrawlGivesUpOnADatabaseThatStaysAway(t *testing.T) {
	st, w, tg, other := lockableWorld(t)
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var once sync.Once
	var lockErr error
	c := w.w.Crawler(nil)
	c.StoreWait = 3 * time.Second
	c.Progress = func(e crawl.Event) {
		if e.Kind == "article" {
			once.Do(func() { _, lockErr = conn.ExecContext(ctx, "BEGIN IMMEDIATE") }) // held to the end
		}
	}
	res := c.CrawlTarget(ctx, *tg)
	if lockErr != nil {
		t.Fatalf("the other writer: %v", lockErr)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	var down *store.UnavailableError
	if !errors.As(res.Err, &down) || res.Interrupted {
		t.Fatalf("the crawl: err %v, interrupted %v; want a database-unreachable error", res.Err, res.Interrupted)
	}
	counts, err := st.FrontierCounts(ctx, tg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.FrontierFailed] != 0 || res.Failed != 0 {
		t.Errorf("links marked failed while the database was away: frontier %v, %d failed in the run", counts, res.Failed)
	}
	if counts[store.FrontierNew] == 0 {
		t.Errorf("no link left due after the crawl gave up: %v", counts)
	}
}
