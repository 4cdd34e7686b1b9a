package cli

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/corpustest"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/mcp/mcptest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

var releaseBuilt = regexp.MustCompile(`release (\S+) built`)

// TestCorpusThroughTheBinaryAndMCP: the corpus as an operator and an agent
// use it. `zhizhi corpus intake`, `release build`, `release verify` and
// `release activate` through the real binary; then the real MCP client
// (@modelcontextprotocol/sdk from npm) lists the tools, searches and cites
// through `zhizhi mcp` (stdio, read only) and through serve's /mcp with a
// read key (no fetch tool) and an acquire key (fetch of a page of the
// simulated web), every web-sourced result marked untrusted.
func TestCorpusThroughTheBinaryAndMCP(t *testing.T) {
	waitBound(t)
	mcptest.SDK(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st, "lianzhou_tzgg", "lianzhou_zcwj")
	corpustest.Crawl(t, sw.world, "lianzhou")

	out := sw.zhizhi(t, "", "corpus", "intake", "--target", "lianzhou_tzgg,lianzhou_zcwj")
	if !strings.Contains(out, "new works") || strings.Contains(out, " 0 new works") {
		t.Fatalf("corpus intake:\n%s", out)
	}
	out = sw.zhizhi(t, "", "release", "build")
	m := releaseBuilt.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("release build:\n%s", out)
	}
	version := m[1]
	sw.zhizhi(t, "", "release", "verify", version)
	sw.zhizhi(t, "", "release", "activate", version)
	if out := sw.zhizhi(t, "", "release", "list"); !regexp.MustCompile(`\*\s+` + regexp.QuoteMeta(version) + `\s+verified`).MatchString(out) {
		t.Fatalf("release list does not mark %s active and verified:\n%s", version, out)
	}

	// What the agent should find: a work of the release and its text.
	rel, err := corpus.New(sw.st, "test").Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := rel.Entries[0]
	want, err := rel.Citation(e.ID, "gbt7714")
	if err != nil {
		t.Fatal(err)
	}
	query := []rune(e.Title)[:2]
	if out := sw.zhizhi(t, "", "search", "--limit", "100", string(query)); !strings.Contains(out, e.ID) ||
		!strings.Contains(out, "【"+string(query)+"】") {
		t.Fatalf("zhizhi search %s does not show %s highlighted:\n%s", string(query), e.ID, out)
	}
	if out := sw.zhizhi(t, "", "search", "--cite", "gbt7714", "--docno", e.DocNo); e.DocNo != "" &&
		!strings.Contains(out, e.ID) {
		t.Fatalf("zhizhi search --docno %s does not find %s:\n%s", e.DocNo, e.ID, out)
	}
	bad := exec.Command(zhizhiBinary(t), "search", "a\x01b")
	bad.Env = sw.serveEnv(sw.dataDir)
	if out, err := bad.CombinedOutput(); exitStatus(err) != 2 || !strings.Contains(string(out), "控制字符") {
		t.Fatalf("zhizhi search with a control character: exit %d\n%s", exitStatus(err), out)
	}

	steps := []mcptest.Step{
		mcptest.ListTools(),
		mcptest.Call("search", map[string]any{"query": string(query), "limit": 50}),
		mcptest.Call("cite", map[string]any{"id": e.ID, "format": "gbt7714"}),
		mcptest.Call("read_work", map[string]any{"id": e.ID}),
		mcptest.Call("fetch", map[string]any{"url": e.URL}),
	}
	env := map[string]string{}
	for _, kv := range sw.serveEnv(sw.dataDir) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	stdio := mcptest.Run(t, mcptest.Plan{Stdio: &mcptest.Stdio{Command: zhizhiBinary(t), Args: []string{"mcp"}, Env: env},
		Steps: steps})
	checkAgent(t, "zhizhi mcp", stdio, version, e, want, false)

	srv := sw.startServe(t, sw.dataDir)
	defer srv.stop(t)
	run := func(args ...string) string { return sw.zhizhi(t, "s3cret-pass-1\n", args...) }
	run("user", "add", "agent", "--role", "operator", "--password-stdin")
	keyOf := func(out string) string {
		k := regexp.MustCompile(`zk_[A-Za-z0-9_-]+`).FindString(out)
		if k == "" {
			t.Fatalf("apikey create printed no key:\n%s", out)
		}
		return k
	}
	reader := keyOf(run("apikey", "create", "--user", "agent", "--name", "rag", "--scope", "read"))
	fetcher := keyOf(run("apikey", "create", "--user", "agent", "--name", "agent", "--scopes", "read,acquire"))
	outs := mcptest.RunAll(t,
		mcptest.Plan{URL: "http://" + srv.addr + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + reader}, Steps: steps},
		mcptest.Plan{URL: "http://" + srv.addr + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + fetcher}, Steps: steps},
		mcptest.Plan{URL: "http://" + srv.addr + "/mcp", Steps: steps[:1]})
	checkAgent(t, "serve /mcp, read key", outs[0], version, e, want, false)
	checkAgent(t, "serve /mcp, acquire key", outs[1], version, e, want, true)
	if outs[2].ConnectError == nil {
		t.Fatalf("serve /mcp without a key connected: %+v", outs[2])
	}
}

// toolResult is what the client received from a tool call.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func checkAgent(t *testing.T, via string, o *mcptest.Outcome, version string, e corpus.WorkEntry, citation string, canFetch bool) {
	t.Helper()
	if o.ConnectError != nil {
		t.Fatalf("%s: connect: %+v", via, o.ConnectError)
	}
	if len(o.Steps) != 5 {
		t.Fatalf("%s: %d steps answered", via, len(o.Steps))
	}
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(o.Steps[0].Result, &tools); err != nil {
		t.Fatalf("%s: tools: %v", via, err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	wantNames := []string{"cite", "read_work", "search"}
	if canFetch {
		wantNames = []string{"cite", "fetch", "read_work", "search"}
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("%s: tools %v, want %v", via, names, wantNames)
	}
	result := func(i int) (toolResult, map[string]any) {
		t.Helper()
		if o.Steps[i].Error != nil {
			t.Fatalf("%s: %s threw %+v", via, o.Steps[i].Name, o.Steps[i].Error)
		}
		var r toolResult
		if err := json.Unmarshal(o.Steps[i].Result, &r); err != nil {
			t.Fatalf("%s: %s: %v", via, o.Steps[i].Name, err)
		}
		var sc map[string]any
		_ = json.Unmarshal(r.StructuredContent, &sc)
		return r, sc
	}
	for i := 1; i <= 3; i++ {
		r, sc := result(i)
		if r.IsError || sc["release"] != version || sc["untrusted"] != true {
			t.Fatalf("%s: %s: error %v, release %v, untrusted %v: %s", via, o.Steps[i].Name, r.IsError, sc["release"],
				sc["untrusted"], o.Steps[i].Result)
		}
		if len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "UNTRUSTED") {
			t.Fatalf("%s: %s: the text is not fenced as untrusted: %+v", via, o.Steps[i].Name, r.Content)
		}
	}
	_, sc := result(1)
	found := false
	for _, h := range sc["hits"].([]any) {
		if h.(map[string]any)["id"] == e.ID {
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: search found no %s: %v", via, e.ID, sc["hits"])
	}
	if _, sc := result(2); sc["citation"] != citation {
		t.Fatalf("%s: cite gave %v, want %s", via, sc["citation"], citation)
	}
	if _, sc := result(3); sc["id"] != e.ID || sc["revision"] != float64(e.Rev) {
		t.Fatalf("%s: read_work gave %v revision %v", via, sc["id"], sc["revision"])
	}
	r, sc := result(4)
	if canFetch {
		if r.IsError || sc["untrusted"] != true || sc["status_code"] != float64(200) {
			t.Fatalf("%s: fetch: %s", via, o.Steps[4].Result)
		}
	} else if !r.IsError {
		t.Fatalf("%s: a caller without the acquire scope fetched: %s", via, o.Steps[4].Result)
	}
}

// saysSwitching returns a channel closed when cmd says on its standard
// error that it moves the active pointer now.
func saysSwitching(t *testing.T, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	r, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(r)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), "moving the active pointer") {
				close(ch)
				closed = true
			}
		}
	}()
	return ch
}

// waitBlocked returns once an activation is waiting for the lock this
// test holds on the pointer: on PostgreSQL when the server says a backend
// waits for a lock; on SQLite (which cannot say) shortly after the binary
// said it moves the pointer — its next statement is the write that waits,
// well within its 5 s busy timeout.
func waitBlocked(t *testing.T, st *store.Store, switching <-chan struct{}) {
	t.Helper()
	select {
	case <-switching:
	case <-time.After(2 * time.Minute): // a safety net, not a measure
		t.Fatal("the activation never said it moves the pointer")
	}
	if st.Dialect() != store.DialectPostgres {
		time.Sleep(300 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(time.Minute) // a safety net, not a measure
	for time.Now().Before(deadline) {
		var n int
		if err := st.DB().QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%corpus_active%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the activation never waited for the pointer's lock")
}

// TestReleaseActivateSurvivesKills: `zhizhi release activate`, the real
// binary, is killed with SIGKILL at random moments while it moves the
// active release between two verified releases, and while it waits
// inside its transaction, on both dialects. After
// every kill the active release is the old one or the new one, never
// neither and never a third; the pointer, its audit entries and the
// release files agree; and a final unkilled activation succeeds.
func TestReleaseActivateSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary a dozen times; skipped with -short")
	}
	waitBound(t)
	eachDialect(t, func(t *testing.T, dir, dsn string) {
		ctx := context.Background()
		st, err := store.Open(ctx, dsn, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig, Sim: sim.Options{Seed: 1}})
		corpustest.Crawl(t, w, "lianzhou")
		svc := corpus.New(st, "test")
		if _, err := svc.IntakeTargets(ctx, nil, "test", nil); err != nil {
			t.Fatal(err)
		}
		var versions []string
		for range 2 {
			b, err := svc.Build(ctx, "test", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Verify(ctx, b.Version, "test", corpus.VerifyOptions{}, nil); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, b.Version)
		}
		if _, err := svc.Activate(ctx, versions[0], "test"); err != nil {
			t.Fatal(err)
		}
		env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") }),
			"ZHIZHI_DATA_DIR="+dir, "ZHIZHI_DATABASE_URL="+dsn)
		bin := zhizhiBinary(t)
		activate := func(v string) *exec.Cmd {
			cmd := exec.Command(bin, "release", "activate", v)
			cmd.Env = env
			return cmd
		}
		// How long an activation takes here, now (the quickest of three):
		// the kills land within it.
		var span time.Duration
		for i := range 3 {
			start := time.Now()
			if out, err := activate(versions[(i+1)%2]).CombinedOutput(); err != nil {
				t.Fatalf("release activate: %v\n%s", err, out)
			}
			if d := time.Since(start); span == 0 || d < span {
				span = d
			}
		}
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		// Kills at random moments of an activation, until ten landed in a
		// run under way (a kill after the process ended proves nothing);
		// and every other try, a kill while the activation waits inside its
		// transaction for a lock this test holds on the pointer: the moment
		// between "changed" and "committed".
		killed, inTx, moved, tries := 0, 0, 0, 0
		for i := 0; (killed < 10 || inTx < 3) && i < 40; i++ {
			tries++
			act, err := st.ActiveCorpusRelease(ctx)
			if err != nil {
				t.Fatalf("kill %d: the active release is gone: %v", i, err)
			}
			other := versions[0]
			if act.Version == versions[0] {
				other = versions[1]
			}
			var hold *sql.Tx
			if i%2 == 1 {
				if hold, err = st.DB().BeginTx(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := hold.ExecContext(ctx, "UPDATE corpus_active SET activated_by = activated_by WHERE id = 1"); err != nil {
					t.Fatal(err)
				}
			}
			cmd := activate(other)
			var switching <-chan struct{}
			if hold != nil {
				switching = saysSwitching(t, cmd)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if hold != nil {
				waitBlocked(t, st, switching)
			} else {
				time.Sleep(time.Duration(rng.Int64N(int64(span))))
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err = cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
				killed++
				if hold != nil {
					inTx++
				}
			} else if hold != nil {
				t.Fatalf("kill %d: the activation ended while this test held the pointer's lock: %v", i, err)
			}
			if hold != nil {
				if err := hold.Rollback(); err != nil {
					t.Fatal(err)
				}
			}
			after, err := st.ActiveCorpusRelease(ctx)
			if err != nil {
				t.Fatalf("after kill %d: no active release: %v", i, err)
			}
			switch after.Version {
			case act.Version:
			case other:
				if hold != nil {
					t.Fatalf("after kill %d: the activation killed inside its transaction moved the pointer", i)
				}
				moved++
				if after.Previous != act.Version {
					t.Fatalf("after kill %d: %s is active with previous %s, want %s", i, other, after.Previous, act.Version)
				}
			default:
				t.Fatalf("after kill %d: %s is active, want %s or %s", i, after.Version, act.Version, other)
			}
			r, err := svc.Open(ctx, after.Version)
			if err != nil || len(r.Entries) == 0 {
				t.Fatalf("after kill %d: the active release %s cannot be read: %v", i, after.Version, err)
			}
		}
		if killed < 10 || inTx < 3 {
			t.Fatalf("only %d of %d kills ended an activation under way (%d inside its transaction)", killed, tries, inTx)
		}
		t.Logf("%d of %d activations killed under way, %d of them inside the transaction; the pointer moved %d times",
			killed, tries, inTx, moved)
		// The audit trail has one activation entry per move of the pointer.
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_release", Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		acts := 0
		for _, a := range entries {
			if a.Action == "corpus.release.activate" {
				acts++
			}
		}
		if want := 4 + moved; acts != want {
			t.Fatalf("%d activation audit entries, want %d (4 unkilled + %d moved)", acts, want, moved)
		}
		for _, v := range versions {
			if err := svc.Verify(ctx, v, "test", corpus.VerifyOptions{SkipSnapshots: true}, nil); err != nil {
				t.Fatalf("release %s after the kills: %v", v, err)
			}
		}
	})
}
