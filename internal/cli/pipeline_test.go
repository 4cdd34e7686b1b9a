package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/export"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// The binary is built once, on first need, for every test of the package
// that runs it as an operator does.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// zhizhiBinary builds cmd/zhizhi once and returns its path.
func zhizhiBinary(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the binary")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "zhizhi-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "zhizhi")
		out, err := exec.Command(goBin, "build", "-o", binPath, "zhizhi/cmd/zhizhi").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// runResult is what one run of the binary did.
type runResult struct {
	stdout, stderr string
	code           int
}

// runZhizhi runs the binary with env (and no other ZHIZHI_ variable from
// the test's environment).
func runZhizhi(t testing.TB, env []string, args ...string) runResult {
	t.Helper()
	return runZhizhiFor(t, 10, env, args...)
}

// runZhizhiFor is runZhizhi with a safety net of minutes against a hung
// child; nothing measures time.
func runZhizhiFor(t testing.TB, minutes int, env []string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(minutes)*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zhizhiBinary(t), args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") }), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := runResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run zhizhi %v: %v", args, err)
	}
	return r
}

// crawledDB is a data directory whose SQLite database holds a crawl of the
// simulated web (without the city portal: export does not care which tier
// fetched an article), made in-process at owned-host rates.
type crawledDB struct {
	dir   string
	st    *store.Store
	world *crawltest.World
	env   []string
}

func newCrawledDB(t *testing.T, crawl bool) *crawledDB {
	t.Helper()
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "zhizhi.db")
	st, err := store.Open(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: bundledConfig, Sim: sim.Options{Seed: 1}})
	if crawl {
		w.Crawl(t, nil, false)
	}
	cfg, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &crawledDB{dir: dir, st: st, world: w, env: []string{
		"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_DATA_DIR=" + dir, "ZHIZHI_CONFIG_DIR=" + cfg,
		"ZHIZHI_RESOLVE=" + w.Sim.ResolveString(), "ZHIZHI_CHROMIUM=" + filepath.Join(dir, "no-chromium"),
	}}
}

var cursorLine = regexp.MustCompile(`next cursor: (\S*)`)

// exportRun runs `zhizhi export` and returns its lines and the cursor it
// printed on stderr.
func exportRun(t *testing.T, db *crawledDB, args ...string) ([]export.Line, []string, string) {
	t.Helper()
	r := runZhizhi(t, db.env, append([]string{"export"}, args...)...)
	if r.code != 0 {
		t.Fatalf("export %v: exit %d: %s", args, r.code, r.stderr)
	}
	m := cursorLine.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("export %v printed no cursor on stderr: %q", args, r.stderr)
	}
	var lines []export.Line
	var raw []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l export.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("export line is not JSON: %v\n%.200s", err, sc.Text())
		}
		lines = append(lines, l)
		raw = append(raw, sc.Text())
	}
	return lines, raw, m[1]
}

func ids(lines []export.Line) map[int64]bool {
	out := map[int64]bool{}
	for _, l := range lines {
		out[l.ID] = true
	}
	return out
}

// TestExportCommand: two consecutive exports with the cursor are disjoint
// and together hold every ready article; the same cursor gives the same
// rows; the filters select what they say; a bad status is a usage error.
func TestExportCommand(t *testing.T) {
	waitBound(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	db := newCrawledDB(t, true)
	ready := map[int64]model.Article{}
	for _, a := range crawltest.AllArticles(t, db.st) {
		if a.Status == model.StatusReady {
			ready[a.ID] = a
		}
	}
	if len(ready) < 20 {
		t.Fatalf("only %d ready articles after the crawl", len(ready))
	}
	half := fmt.Sprint(len(ready) / 2)

	first, firstRaw, cursor := exportRun(t, db, "--limit", half)
	second, secondRaw, cursor2 := exportRun(t, db, "--since", cursor)

	t.Run("consecutive exports are disjoint and complete", func(t *testing.T) {
		if fmt.Sprint(len(first)) != half || cursor == "" {
			t.Fatalf("first export: %d lines (want %s), cursor %q", len(first), half, cursor)
		}
		a, b := ids(first), ids(second)
		for id := range a {
			if b[id] {
				t.Errorf("article %d in both exports", id)
			}
		}
		for id, art := range ready {
			if !a[id] && !b[id] {
				t.Errorf("ready article %d (%s) in neither export", id, art.URL)
			}
		}
		if len(a)+len(b) != len(ready) || len(first)+len(second) != len(ready) {
			t.Errorf("%d + %d lines exported, %d ready articles", len(first), len(second), len(ready))
		}
		for _, l := range append(first, second...) {
			if l.Status != model.StatusReady || l.URL == "" || l.URLHash == "" || l.SiteCode == "" || l.TargetCode == "" || l.Attachments == nil {
				t.Errorf("line %d: status %q url %q hash %q site %q target %q attachments %v",
					l.ID, l.Status, l.URL, l.URLHash, l.SiteCode, l.TargetCode, l.Attachments)
			}
		}
	})

	// The knowledge base gets the text of PDF attachments: every line the
	// simulated file carries is in the exported text.
	t.Run("PDF attachments carry their text", func(t *testing.T) {
		if _, err := exec.LookPath("pdftotext"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("pdftotext is required under CI (scripts/ensure-deps.sh poppler)")
			}
			t.Skip("pdftotext not installed")
		}
		truth := map[string]sim.TruthAttachment{}
		for _, a := range db.world.Sim.Truth() {
			for _, f := range a.Attachments {
				truth[f.URL] = f
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		checked := 0
		for _, l := range append(first, second...) {
			for _, at := range l.Attachments {
				tf, ok := truth[at.URL]
				if !ok || tf.Ext != "pdf" || !at.Stored {
					continue
				}
				checked++
				if at.Text == nil || at.TextClass == nil || *at.TextClass != "text" || at.PageCount == nil || *at.PageCount < 1 || at.TextError != nil {
					t.Errorf("%s: text %v, class %v, pages %v, error %v; want its text, class text", at.URL, at.Text != nil, at.TextClass, at.PageCount, at.TextError)
					continue
				}
				got := squash(*at.Text)
				for _, line := range tf.Lines {
					if !strings.Contains(got, squash(line)) {
						t.Errorf("%s: exported text lacks the line %q", at.URL, line)
					}
				}
			}
		}
		if checked == 0 {
			t.Fatal("no stored PDF attachment in the export")
		}
		t.Logf("%d PDF attachments checked against the simulated web's truth", checked)
	})

	t.Run("an export after the last cursor is empty", func(t *testing.T) {
		if lines, _, next := exportRun(t, db, "--since", cursor2); len(lines) != 0 || next != cursor2 {
			t.Errorf("%d lines and cursor %q after the end, want none and the same cursor %q", len(lines), next, cursor2)
		}
	})

	t.Run("the same cursor returns the same rows", func(t *testing.T) {
		_, again, next := exportRun(t, db, "--since", cursor)
		if !slices.Equal(again, secondRaw) || next != cursor2 {
			t.Errorf("re-export with cursor %q gave %d lines (cursor %q), first time %d lines (cursor %q), or the lines differ",
				cursor, len(again), next, len(secondRaw), cursor2)
		}
		_, againFirst, nextFirst := exportRun(t, db, "--limit", half)
		if !slices.Equal(againFirst, firstRaw) || nextFirst != cursor {
			t.Errorf("re-export from the start differs from the first export")
		}
	})

	t.Run("exported articles are marked", func(t *testing.T) {
		for _, a := range crawltest.AllArticles(t, db.st) {
			if a.Status == model.StatusReady && a.ExportedToRAGAt == nil {
				t.Errorf("article %d exported but exported_to_rag_at not set", a.ID)
				break
			}
		}
	})

	sites, err := db.st.ListSites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	roleOf := map[int64]string{}
	for _, s := range sites {
		roleOf[s.ID] = s.SiteRole
	}
	// Pick filter values that select some ready articles but not all.
	var dept int64
	var category string
	for _, a := range ready {
		if a.DeptID != nil && dept == 0 {
			dept = *a.DeptID
		}
		if category == "" && a.ContentCategory != "" {
			category = a.ContentCategory
		}
	}
	filters := []struct {
		name  string
		args  []string
		match func(a model.Article) bool
		line  func(l export.Line) bool
	}{
		{"--dept", []string{"--dept", fmt.Sprint(dept)},
			func(a model.Article) bool { return a.DeptID != nil && *a.DeptID == dept },
			func(l export.Line) bool { return l.DeptID != nil && *l.DeptID == dept }},
		{"--category", []string{"--category", category},
			func(a model.Article) bool { return a.ContentCategory == category },
			func(l export.Line) bool { return l.ContentCategory == category }},
		{"--site-role", []string{"--site-role", model.RoleCountyLocal},
			func(a model.Article) bool { return roleOf[a.SiteID] == model.RoleCountyLocal },
			func(l export.Line) bool { return l.SiteRole == model.RoleCountyLocal }},
		{"--dept with --site-role", []string{"--dept", fmt.Sprint(dept), "--site-role", model.RoleNationRef},
			func(a model.Article) bool {
				return a.DeptID != nil && *a.DeptID == dept && roleOf[a.SiteID] == model.RoleNationRef
			},
			func(l export.Line) bool { return false }},
	}
	for _, f := range filters {
		t.Run("filter "+f.name, func(t *testing.T) {
			want := map[int64]bool{}
			for id, a := range ready {
				if f.match(a) {
					want[id] = true
				}
			}
			if f.name != "--dept with --site-role" && (len(want) == 0 || len(want) == len(ready)) {
				t.Fatalf("filter %v selects %d of %d ready articles; the test needs some but not all", f.args, len(want), len(ready))
			}
			lines, _, _ := exportRun(t, db, append(f.args, "--no-mark")...)
			got := ids(lines)
			for _, l := range lines {
				if !f.line(l) {
					t.Errorf("line %d does not match %v", l.ID, f.args)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%v exported %d articles, %d match", f.args, len(got), len(want))
			}
			for id := range want {
				if !got[id] {
					t.Errorf("%v left out article %d", f.args, id)
				}
			}
		})
	}

	usage := []struct {
		name string
		args []string
		want string
	}{
		{"bad status", []string{"export", "--status", "done"}, `--status "done"`},
		{"bad site role", []string{"export", "--site-role", "city"}, `--site-role "city"`},
	}
	for _, u := range usage {
		t.Run(u.name, func(t *testing.T) {
			r := runZhizhi(t, db.env, u.args...)
			if r.code != 2 || !strings.Contains(r.stderr, u.want) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %.100q; want exit 2 naming %s and no output", r.code, r.stderr, r.stdout, u.want)
			}
		})
	}
}

// copyDir copies the bundled configuration so a test can break a copy.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestValidateCommand runs `zhizhi validate` against an in-process
// simulated web: a good target is green (exit 0), also as JSON; a site
// whose list selector no longer matches is red (exit 1) with the reason.
func TestValidateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	waitBound(t)
	db := newCrawledDB(t, false)

	broken := filepath.Join(t.TempDir(), "config")
	copyDir(t, bundledConfig, broken)
	lz := filepath.Join(broken, "sites", "lianzhou.yaml")
	b, err := os.ReadFile(lz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`item: "ul.list li"`)) {
		t.Fatal("lianzhou.yaml has no list item selector to break")
	}
	if err := os.WriteFile(lz, bytes.Replace(b, []byte(`item: "ul.list li"`), []byte(`item: "ul.gone li"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	brokenEnv := append(slices.Clone(db.env), "ZHIZHI_CONFIG_DIR="+broken)

	var sample sim.TruthArticle
	for _, a := range db.world.Sim.Truth() {
		if a.TargetCode == "lianzhou_tzgg" {
			sample = a
			break
		}
	}

	t.Run("green target", func(t *testing.T) {
		r := runZhizhi(t, db.env, "validate", "--target", "lianzhou_tzgg")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, s := range []string{"✓ 列表页", "✓ 标题", "✓ 正文", "写入: 仅 crawl_log 请求记录；未保存文章、附件或页面状态", "结果: ✓ 通过"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("output does not say %q:\n%s", s, r.stdout)
			}
		}
	})

	t.Run("green target as JSON", func(t *testing.T) {
		r := runZhizhi(t, db.env, "validate", "--target", "lianzhou_tzgg", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		var v struct {
			Green        bool              `json:"green"`
			ListItems    int               `json:"list_items"`
			Title        string            `json:"title"`
			ContentChars int               `json:"content_chars"`
			Attributes   map[string]string `json:"attributes"`
			Problems     []string          `json:"problems"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		if !v.Green || v.ListItems == 0 || v.Title == "" || v.ContentChars < 50 || len(v.Problems) > 0 {
			t.Errorf("report %+v, want green with list items, a title and a body", v)
		}
	})

	t.Run("site and sample given by URL", func(t *testing.T) {
		r := runZhizhi(t, db.env, "validate", "--site", "lianzhou", "--entry", "http://www.lianzhou.gov.test/tzgg/", "--sample", sample.URL, "--json")
		var v struct {
			Green bool   `json:"green"`
			Title string `json:"title"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		if r.code != 0 || !v.Green || v.Title != sample.Title {
			t.Errorf("exit %d, green %v, title %q; want 0, green, %q", r.code, v.Green, v.Title, sample.Title)
		}
		// A dry run of a site has no target; its requests are still logged
		// (crawl_log.target_id NULL), never refused by the foreign key.
		if strings.Contains(r.stderr, "level=ERROR") {
			t.Errorf("validate --site logged errors:\n%s", r.stderr)
		}
	})

	t.Run("an entry on another site's host is refused as lint refuses it", func(t *testing.T) {
		r := runZhizhi(t, db.env, "validate", "--site", "lianzhou", "--entry", "http://www.gd.gov.test/zwgk/wjk/")
		if r.code != 2 || !strings.Contains(r.stderr, "entry_url host www.gd.gov.test differs from base_url host www.lianzhou.gov.test") {
			t.Errorf("exit %d, want 2 naming both hosts\n%s%s", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "robots") || strings.Contains(r.stdout, "list page") {
			t.Errorf("validate fetched before refusing:\n%s", r.stdout)
		}
	})

	t.Run("broken list selector is red with the reason", func(t *testing.T) {
		r := runZhizhi(t, brokenEnv, "validate", "--target", "lianzhou_tzgg")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, s := range []string{`the item selector "ul.gone li" matched nothing`, "结果: ✗ 未通过"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("output does not say %q:\n%s", s, r.stdout)
			}
		}
	})

	t.Run("broken list selector as JSON", func(t *testing.T) {
		r := runZhizhi(t, brokenEnv, "validate", "--target", "lianzhou_tzgg", "--json")
		var v struct {
			Green     bool     `json:"green"`
			ListItems int      `json:"list_items"`
			Problems  []string `json:"problems"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		if r.code != 1 || v.Green || v.ListItems != 0 || !strings.Contains(strings.Join(v.Problems, "\n"), "ul.gone li") {
			t.Errorf("exit %d, report %+v; want exit 1, red, the selector named", r.code, v)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		r := runZhizhi(t, db.env, "validate")
		if r.code != 2 || !strings.Contains(r.stderr, "--target") {
			t.Errorf("exit %d stderr %q, want 2 and the usage", r.code, r.stderr)
		}
		r = runZhizhi(t, db.env, "validate", "--target", "no_such_target")
		if r.code != 1 || !strings.Contains(r.stderr, `"no_such_target" is not in the database`) {
			t.Errorf("exit %d stderr %q, want 1 naming the target", r.code, r.stderr)
		}
	})
}

// TestExtractCommand runs `zhizhi extract` on a saved page with no
// template and reads its JSON.
func TestExtractCommand(t *testing.T) {
	waitBound(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>关于开展2024年安全生产检查的通知_清远市人民政府</title></head>
<body><div class="nav"><a href="/">首页</a> &gt; <a href="/zwgk/">政务公开</a></div>
<table class="xxgk"><tr><td>索引号：</td><td>QY-2024-0001</td><td>发布机构：</td><td>清远市应急管理局</td></tr>
<tr><td>成文日期：</td><td>2024-03-01</td><td>文号：</td><td>清应急〔2024〕1号</td></tr></table>
<div class="article"><h1>关于开展2024年安全生产检查的通知</h1>
<div class="info">发布时间：2024-03-05 10:30</div>
<div class="content">
<p>各县（市、区）应急管理局，市直有关单位：为切实做好安全生产工作，防范和遏制重特大事故发生，经研究，决定在全市范围内开展安全生产大检查。</p>
<p>一、检查时间。2024年3月至5月，分自查自纠、重点检查和总结提高三个阶段进行，各单位要按时完成各阶段工作任务。</p>
<p>二、检查内容。重点检查企业安全生产主体责任落实情况、隐患排查治理情况和应急预案演练情况，发现问题及时整改。</p>
<p>附件：<a href="/attach/plan.pdf">检查方案.pdf</a></p>
</div></div></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"ZHIZHI_DATA_DIR=" + dir}

	t.Run("a file gives the JSON fields", func(t *testing.T) {
		r := runZhizhi(t, env, "extract", "--base", "http://www.qingyuan.gov.test/zwgk/tzgg/", page)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var p struct {
			Title       string            `json:"title"`
			PublishTime *time.Time        `json:"publish_time"`
			Text        string            `json:"text"`
			Attributes  map[string]string `json:"attributes"`
			Canonical   map[string]string `json:"canonical"`
			Links       []string          `json:"links"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		if p.Title != "关于开展2024年安全生产检查的通知" {
			t.Errorf("title %q", p.Title)
		}
		if want := time.Date(2024, 3, 5, 2, 30, 0, 0, time.UTC); p.PublishTime == nil || !p.PublishTime.Equal(want) {
			t.Errorf("publish_time %v, want %v", p.PublishTime, want)
		}
		if !strings.Contains(p.Text, "决定在全市范围内开展安全生产大检查") || !strings.Contains(p.Text, "应急预案演练情况") {
			t.Errorf("text misses the body: %q", p.Text)
		}
		if p.Canonical["index_no"] != "QY-2024-0001" || p.Canonical["doc_no"] != "清应急〔2024〕1号" || p.Attributes["发布机构"] != "清远市应急管理局" {
			t.Errorf("attributes %v canonical %v", p.Attributes, p.Canonical)
		}
		if !slices.Contains(p.Links, "http://www.qingyuan.gov.test/attach/plan.pdf") {
			t.Errorf("links %v do not hold the attachment, resolved against --base", p.Links)
		}
	})

	usage := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no arguments", []string{"extract"}, 2, "give either --url URL or one FILE"},
		{"both a URL and a file", []string{"extract", "--url", "http://www.example.gov.test/", page}, 2, "give either --url URL or one FILE"},
		{"missing file", []string{"extract", filepath.Join(dir, "nope.html")}, 1, "nope.html"},
		{"relative base", []string{"extract", "--base", "zwgk/", page}, 2, `--base "zwgk/"`},
		{"unknown charset", []string{"extract", "--charset", "bogus", page}, 2, `--charset "bogus" is not a known charset`},
	}
	for _, u := range usage {
		t.Run(u.name, func(t *testing.T) {
			r := runZhizhi(t, env, u.args...)
			if r.code != u.code || !strings.Contains(r.stderr, u.want) {
				t.Errorf("exit %d stderr %q, want exit %d saying %q", r.code, r.stderr, u.code, u.want)
			}
		})
	}
}
