package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to make a throwaway schema

	"zhizhi/internal/store/storetest"
)

// bundledConfig is the example configuration shipped in the repository,
// which `make demo` lints, syncs and lists.
const bundledConfig = "../../demo/config"

// buildBinary is the zhizhi binary the package's tests share (built once,
// by zhizhiBinary); skipped with -short.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the zhizhi binary; skipped with -short")
	}
	return zhizhiBinary(t)
}

// cliEnv runs the binary against one database and one config directory.
type cliEnv struct {
	bin, dataDir, dbURL, configDir string
}

func (e cliEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), "ZHIZHI_DATA_DIR="+e.dataDir, "ZHIZHI_DATABASE_URL="+e.dbURL,
		"ZHIZHI_CONFIG_DIR="+e.configDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("zhizhi %s exited %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), ee.ExitCode(), stdout.String(), stderr.String())
	} else if err != nil {
		t.Fatalf("run zhizhi %v: %v", args, err)
	}
	return stdout.String()
}

// setUp does what `make demo` does before listing: migrate, import the
// departments, sync the configuration.
func (e cliEnv) setUp(t *testing.T) {
	t.Helper()
	e.run(t, "migrate")
	e.run(t, "dept", "import", filepath.Join(e.configDir, "departments.csv"))
	e.run(t, "config", "sync")
}

// eachDialect runs fn once on a fresh SQLite file in dir and once on a
// fresh PostgreSQL database (skipped like storetest without one), as the
// subtests "sqlite" and "postgres".
func eachDialect(t *testing.T, fn func(t *testing.T, dir, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, dir, "sqlite://"+filepath.Join(dir, "zhizhi.db"))
	})
	t.Run("postgres", func(t *testing.T) { fn(t, t.TempDir(), pgSchemaURL(t)) })
}

// pgSchemaURL returns a URL for a fresh database on the test PostgreSQL
// server, dropped when the test ends, or skips like storetest does.
func pgSchemaURL(t *testing.T) string {
	t.Helper()
	return storetest.PostgresURL(t)
}

// TestTargetListBundledConfig lists what the bundled configuration declares,
// on SQLite and PostgreSQL, the way an operator reads it after `make demo`.
func TestTargetListBundledConfig(t *testing.T) {
	waitBound(t)
	bin := buildBinary(t)
	dialects := []struct {
		name  string
		dbURL func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "" }},
		{"postgres", pgSchemaURL},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			env := cliEnv{bin: bin, dataDir: t.TempDir(), dbURL: d.dbURL(t), configDir: bundledConfig}
			env.setUp(t)

			out := env.run(t, "target", "list")
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) < 3 {
				t.Fatalf("target list printed %d lines:\n%s", len(lines), out)
			}
			rows := map[string][]string{} // target_code → cells
			for _, l := range lines[1 : len(lines)-1] {
				f := strings.Fields(l)
				rows[f[0]] = f
			}

			wantRows := []struct {
				name   string
				code   string
				prefix []string // the first cells: target_code, site, dept words
				url    string
			}{
				{"gkmlpt mapped dept with its department name", "qingcheng_qcfgw_2849",
					[]string{"qingcheng_qcfgw_2849", "qingcheng", "mapped", "2101", "清远市清城区发展和改革局"},
					"http://www.qingcheng.gov.test/qcfgw/gkmlpt/index#2849"},
				{"gkmlpt city_level badge", "qingyuan_xxgk_90001",
					[]string{"qingyuan_xxgk_90001", "qingyuan", "city_level", "市本级"}, ""},
				{"gkmlpt cross_dept badge", "qingyuan_tjgb_91001",
					[]string{"qingyuan_tjgb_91001", "qingyuan", "cross_dept", "跨部门"}, ""},
				{"template target on a reference site", "gd_ref_wjk",
					[]string{"gd_ref_wjk", "gd_ref", "external_ref", "外部参考"}, "http://www.gd.gov.test/zwgk/wjk/"},
				{"template target mapped by local_dept_id", "lianzhou_zcwj",
					[]string{"lianzhou_zcwj", "lianzhou", "mapped", "2403", "连州市人民政府办公室"}, ""},
			}
			for _, w := range wantRows {
				t.Run(w.name, func(t *testing.T) {
					got, ok := rows[w.code]
					if !ok {
						t.Fatalf("no row for %s in:\n%s", w.code, out)
					}
					if len(got) < len(w.prefix) || strings.Join(got[:len(w.prefix)], " ") != strings.Join(w.prefix, " ") {
						t.Errorf("row %s = %q, want it to start with %q", w.code, got, w.prefix)
					}
					// A cron "M H * * *" inside 01:00–04:59, then the rest.
					rest := got[len(w.prefix):]
					if len(rest) < 9 || rest[2] != "*" || !strings.Contains("1234", rest[1]) {
						t.Errorf("row %s: want schedule_cron M H * * * with H in 1–4 after the dept, got %q", w.code, rest)
					}
					if !strings.Contains(strings.Join(rest, " "), "yes yaml http") {
						t.Errorf("row %s: want enabled yes, source yaml, then entry_url; got %q", w.code, rest)
					}
					if w.url != "" && got[len(got)-1] != w.url {
						t.Errorf("row %s: entry_url %q, want %q", w.code, got[len(got)-1], w.url)
					}
				})
			}
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "35 targets on 7 sites, 35 enabled") {
				t.Errorf("summary line %q, want 35 targets on 7 sites, 35 enabled", last)
			}

			// Columns line up on a terminal even though department names are
			// double-width: ENTRY_URL starts at the same display column on
			// every line.
			col := displayWidth(lines[0][:strings.Index(lines[0], "ENTRY_URL")])
			for _, l := range lines[1 : len(lines)-1] {
				i := strings.Index(l, "http")
				if i < 0 || displayWidth(l[:i]) != col {
					t.Errorf("entry_url not at display column %d in %q", col, l)
				}
			}

			// --site narrows the list; --json carries the same facts.
			var js []targetRow
			if err := json.Unmarshal([]byte(env.run(t, "target", "list", "--site", "qingyuan", "--json")), &js); err != nil {
				t.Fatalf("target list --json: %v", err)
			}
			if len(js) != 14 {
				t.Errorf("--site qingyuan --json: %d targets, want 14", len(js))
			}
			for _, r := range js {
				if r.SiteCode != "qingyuan" {
					t.Errorf("--site qingyuan listed %s of site %s", r.TargetCode, r.SiteCode)
				}
				if r.TargetCode == "qingyuan_qyfgw_14002" &&
					(r.DeptBinding != "mapped" || r.DeptID == nil || *r.DeptID != 37 || r.DeptName != "清远市发展和改革局" || r.DeptPath != "qyfgw") {
					t.Errorf("qingyuan_qyfgw_14002 in JSON = %+v, want mapped dept 37 清远市发展和改革局 at qyfgw", r)
				}
			}

			sites := env.run(t, "site", "list")
			for _, want := range []string{
				"qingyuan   清远市人民政府门户网站      qingyuan_local  full     browser   cms:gkmlpt",
				"news       北江新闻网                  province_ref    summary  direct    config/sites/news.yaml",
			} {
				if !strings.Contains(sites, want) {
					t.Errorf("site list lacks %q:\n%s", want, sites)
				}
			}
		})
	}
}

// TestTargetListDisabled shows why a target will not be crawled: a site
// switched off in its file, or a target gone from the files.
func TestTargetListDisabled(t *testing.T) {
	bin := buildBinary(t)
	cfg := t.TempDir()
	if err := os.CopyFS(cfg, os.DirFS(bundledConfig)); err != nil {
		t.Fatalf("copy config: %v", err)
	}
	env := cliEnv{bin: bin, dataDir: t.TempDir(), configDir: cfg}
	env.setUp(t)

	yingde := filepath.Join(cfg, "sites", "yingde.yaml")
	b, err := os.ReadFile(yingde)
	if err != nil {
		t.Fatal(err)
	}
	off := strings.Replace(string(b), "\nenabled: true\n", "\nenabled: false\n", 1)
	if off == string(b) {
		t.Fatal("yingde.yaml has no top-level `enabled: true` to switch off")
	}
	if err := os.WriteFile(yingde, []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cfg, "sites", "news.yaml")); err != nil {
		t.Fatal(err)
	}
	env.run(t, "config", "sync")

	var rows []targetRow
	if err := json.Unmarshal([]byte(env.run(t, "target", "list", "--json")), &rows); err != nil {
		t.Fatalf("target list --json: %v", err)
	}
	byCode := map[string]targetRow{}
	for _, r := range rows {
		byCode[r.TargetCode] = r
	}
	tests := []struct {
		name, code, disabledBy string
	}{
		{"site switched off", "yingde_ydfgw_3101", "site"},
		{"target gone from the files", "news_local", "target"},
		{"untouched target", "qingcheng_qcfgw_2849", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := byCode[tt.code]
			if !ok {
				t.Fatalf("%s missing from target list", tt.code)
			}
			if r.DisabledBy != tt.disabledBy || r.Crawled != (tt.disabledBy == "") {
				t.Errorf("%s: crawled=%v disabled_by=%q, want disabled_by=%q", tt.code, r.Crawled, r.DisabledBy, tt.disabledBy)
			}
		})
	}
	table := env.run(t, "target", "list", "--site", "yingde")
	if !strings.Contains(table, "no (site)") || !strings.Contains(table, "6 targets on 1 sites, 0 enabled") {
		t.Errorf("target list --site yingde should show no (site) and 0 enabled:\n%s", table)
	}
}

func TestDisplayWidth(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"ascii", "qingcheng_qcfgw_2849", 20},
		{"han characters are two cells", "清远市", 6},
		{"mixed", "mapped 37 清远市发展和改革局", 10 + 18},
		{"fullwidth bar", "信息公开｜政策文件", 18},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := displayWidth(tt.in); got != tt.want {
				t.Errorf("displayWidth(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestTableAlignsWideText(t *testing.T) {
	tb := table{header: []string{"CODE", "NAME", "URL"}}
	tb.add("a", "清远市教育局", "http://a")
	tb.add("bb", "x", "http://b")
	var b bytes.Buffer
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "CODE  NAME          URL\n" +
		"a     清远市教育局  http://a\n" +
		"bb    x             http://b\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
