package cli

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// delivery is one export row as the follower saw it.
type delivery struct {
	version     time.Time
	attachments []string // sha256 of each stored attachment, sorted
}

// exportFollower reads the export cursor of a database over and over while
// crawls run and die, as a RAG indexer would, and keeps every row it was
// given.
type exportFollower struct {
	st     *store.Store
	mu     sync.Mutex
	cursor string
	got    map[int64][]delivery
	urls   map[int64]string
	err    error
}

func (f *exportFollower) poll(ctx context.Context) {
	for {
		rows, next, err := f.st.ExportArticles(ctx, store.ExportFilter{SinceCursor: f.cursor, Limit: 1000})
		if err != nil {
			if ctx.Err() == nil {
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
			}
			return
		}
		f.mu.Lock()
		for _, a := range rows {
			var hashes []string
			for _, at := range a.Attachments {
				hashes = append(hashes, at.FileHash)
			}
			sort.Strings(hashes)
			f.got[a.ID] = append(f.got[a.ID], delivery{version: a.UpdatedAt, attachments: hashes})
			f.urls[a.ID] = a.URL
		}
		f.mu.Unlock()
		if len(rows) == 0 || next == f.cursor {
			return
		}
		f.cursor = next
	}
}

// TestCrawlSurvivesKills is the frontier's proof: `zhizhi crawl --all`, the
// real binary at polite rates against the simulated web, is killed with
// SIGKILL at 20 random moments, then a run is let finish. The stored set
// must equal the truth (no duplicates, no ready article missing an
// attachment), nothing may stay undone in the frontier, `zhizhi gc` must
// leave no unreferenced blob, and the export cursor, followed all along,
// must have delivered every article exactly once, with all its attachments.
func TestCrawlSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the simulated web at polite rates (minutes); skipped with -short")
	}
	waitBound(t)
	const kills = 20
	browser := crawltest.Chromium(t)
	db := newCrawledDB(t, false)
	tmp, err := os.MkdirTemp("", "zhizhi-kill-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // best effort: a killed browser's last files
	env := slices.DeleteFunc(slices.Clone(db.env), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_CHROMIUM=") })
	if !browser {
		env = append(env, "ZHIZHI_CHROMIUM="+filepath.Join(db.dir, "no-chromium"))
	}
	env = append(env, "TMPDIR="+tmp)

	ctx, stop := context.WithCancel(context.Background())
	follower := &exportFollower{st: db.st, got: map[int64][]delivery{}, urls: map[int64]string{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			follower.poll(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	bin := zhizhiBinary(t)
	run := func(killAfter time.Duration) (code int, killed bool, out string) {
		cmd := exec.Command(bin, "crawl", "--all")
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") || strings.HasPrefix(kv, "TMPDIR=") }), env...)
		var buf strings.Builder
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var limit <-chan time.Time
		if killAfter > 0 {
			limit = time.After(killAfter)
		} else {
			limit = time.After(20 * time.Minute)
		}
		select {
		case err := <-done:
			return exitStatus(err), false, buf.String()
		case <-limit:
			_ = cmd.Process.Kill()
			<-done
			return -1, true, buf.String()
		}
	}
	killed := 0
	for i := 0; i < kills; i++ {
		after := time.Duration(300+rng.IntN(7700)) * time.Millisecond
		code, wasKilled, out := run(after)
		if !wasKilled {
			t.Logf("run %d finished on its own (exit %d) before the kill at %s", i+1, code, after)
			if code != 0 {
				t.Errorf("a crawl that finished between kills exited %d:\n%s", code, out)
			}
			break
		}
		killed++
		t.Logf("run %d killed after %s", i+1, after)
	}
	if killed < kills {
		t.Errorf("only %d of %d runs were killed mid-crawl: the crawl ended too soon for the test to mean anything", killed, kills)
	}
	code, _, out := run(0)
	if code != 0 {
		t.Errorf("the run after the kills exited %d:\n%s", code, out)
	}
	if r := runZhizhi(t, env, "gc", "--grace", "0s"); r.code != 0 {
		t.Errorf("gc exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	stop()
	wg.Wait()
	follower.poll(context.Background()) // the last rows

	st := db.st
	truth := db.world.Sim.Truth()
	crawltest.Score(t, st, truth, browser).Assert(t)

	// Nothing left undone in the frontier.
	entries, err := st.FrontierEntries(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.State == store.FrontierNew || e.State == store.FrontierFailed {
			t.Errorf("frontier entry %s left %s (%s)", e.URL, e.State, e.LastError)
		}
	}

	// Every blob on disk is referenced, every referenced blob is on disk.
	refs, err := st.BlobRefs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	_ = filepath.WalkDir(filepath.Join(db.dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(db.dir, p)
			onDisk[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	for p := range onDisk {
		if !refs[p] {
			t.Errorf("orphan blob after gc: %s", p)
		}
	}
	for p := range refs {
		if !onDisk[p] {
			t.Errorf("a row refers to a blob that is not there: %s", p)
		}
	}

	// The export cursor gave every ready article exactly once (the world
	// did not change), each time with every attachment the site has.
	if follower.err != nil {
		t.Fatalf("export follower: %v", follower.err)
	}
	wantAtt := map[string][]string{}
	for _, a := range truth {
		n, err := extract.NormalizeURL(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		var hashes []string
		if a.Access != model.AccessSummary {
			for _, at := range a.Attachments {
				hashes = append(hashes, at.SHA256)
			}
		}
		sort.Strings(hashes)
		wantAtt[n] = hashes
	}
	ready := 0
	for _, a := range crawltest.AllArticles(t, st) {
		if a.Status != model.StatusReady {
			continue
		}
		ready++
		ds := follower.got[a.ID]
		if len(ds) != 1 {
			t.Errorf("%s delivered %d times by the export cursor, want once", a.URL, len(ds))
			continue
		}
		if !slices.Equal(ds[0].attachments, wantAtt[a.URL]) {
			t.Errorf("%s delivered with attachments %v, the site has %v", a.URL, ds[0].attachments, wantAtt[a.URL])
		}
	}
	if ready == 0 {
		t.Fatal("no ready article stored")
	}
	t.Logf("%d kills, %d ready articles, %d export deliveries", killed, ready, len(follower.got))
}

// exitStatus is a finished process's exit code.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
