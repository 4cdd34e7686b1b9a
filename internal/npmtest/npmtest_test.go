package npmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// warcio is a package the repository's tests already install, so this
// test shares their cache entry.
const warcio = "warcio@2.4.11"

func TestParseSpec(t *testing.T) {
	good := map[string][2]string{
		"warcio@2.4.11":                    {"warcio", "2.4.11"},
		"@redocly/cli@2.77.0":              {"@redocly/cli", "2.77.0"},
		"@citation-js/plugin-csl@0.9.0":    {"@citation-js/plugin-csl", "0.9.0"},
		"pkg@1.0.0-rc.1":                   {"pkg", "1.0.0-rc.1"},
		"@retorquere/bibtex-parser@9.0.29": {"@retorquere/bibtex-parser", "9.0.29"},
	}
	for spec, want := range good {
		name, version, err := parseSpec(spec)
		if err != nil || name != want[0] || version != want[1] {
			t.Errorf("parseSpec(%q) = %q, %q, %v; want %q, %q", spec, name, version, err, want[0], want[1])
		}
	}
	bad := map[string]string{
		"warcio":             "has no version",
		"@redocly/cli":       "has no version",
		"warcio@":            `version "" is not exact`,
		"warcio@^2.4.11":     `version "^2.4.11" is not exact`,
		"warcio@2.4":         `version "2.4" is not exact`,
		"warcio@latest":      `version "latest" is not exact`,
		"warcio@2.4.x":       `version "2.4.x" is not exact`,
		"Warcio@2.4.11":      `"Warcio" is not an npm package name`,
		"../evil@1.0.0":      `"../evil" is not an npm package name`,
		"@scope@1.0.0":       `"@scope" is not an npm package name`,
		"warcio@2.4.11 ajv":  "is not exact",
		"--prefix=/x@1.0.0":  "is not an npm package name",
		"warcio@>=2.4.11 <3": "is not exact",
	}
	for spec, want := range bad {
		if _, _, err := parseSpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseSpec(%q) error = %v, want one containing %q", spec, err, want)
		}
	}
}

// TestCacheDir: one cache entry per package list, whatever its order;
// another version or another package is another entry.
func TestCacheDir(t *testing.T) {
	ab := cacheDir([]string{"ajv@8.20.0", "citeproc@2.4.63"})
	if ba := cacheDir([]string{"citeproc@2.4.63", "ajv@8.20.0"}); ba != ab {
		t.Errorf("the order of packages changes the cache entry: %s, %s", ab, ba)
	}
	for _, other := range [][]string{{"ajv@8.20.0"}, {"ajv@8.20.1", "citeproc@2.4.63"}, {"ajv@8.20.0", "citeproc@2.4.63", "warcio@2.4.11"}} {
		if d := cacheDir(other); d == ab {
			t.Errorf("%v shares the cache entry of ajv and citeproc: %s", other, d)
		}
	}
	one := filepath.Base(cacheDir([]string{"@redocly/cli@2.77.0"}))
	if !strings.HasPrefix(one, "redocly-cli-") {
		t.Errorf("a single package's cache entry %q is not named after it", one)
	}
	if filepath.Base(filepath.Dir(ab)) != "zhizhi-test" {
		t.Errorf("cache entry %s is not under zhizhi-test", ab)
	}
}

// TestInstallAndNode installs warcio from parallel tests (one install,
// one directory) and runs a script that imports it, with arguments,
// standard input, environment and working directory passed through.
func TestInstallAndNode(t *testing.T) {
	requireTools(t, []string{warcio}) // skipped (or failed under CI) as a whole
	var mu sync.Mutex
	dirs := map[string]bool{}
	t.Run("parallel", func(t *testing.T) {
		for i := range 3 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				d := Install(t, warcio)
				mu.Lock()
				dirs[d] = true
				mu.Unlock()
			})
		}
	})
	if len(dirs) != 1 {
		t.Fatalf("parallel installs of %s gave directories %v, want one", warcio, dirs)
	}
	prefix := Install(t, warcio)
	if !dirs[prefix] {
		t.Fatalf("a later install of %s is in %s, not %v", warcio, prefix, dirs)
	}
	b, err := os.ReadFile(filepath.Join(prefix, "node_modules", "warcio", "package.json"))
	var pkg struct{ Version string }
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != "2.4.11" {
		t.Fatalf("installed warcio package.json: %v %s", err, b)
	}
	entries, err := os.ReadDir(filepath.Dir(prefix))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(prefix)+".tmp-") {
			t.Errorf("a temporary install %s is left beside %s", e.Name(), prefix)
		}
	}

	entry := Path(t, prefix, "warcio", "dist", "index.js")
	work := t.TempDir()
	out := Node(t, Script{
		Path:  filepath.Join("testdata", "probe.mjs"),
		Args:  []string{FileURL(entry), "一", "two words"},
		Stdin: []byte("标准输入\n"),
		Dir:   work,
		Env:   []string{"NPMTEST_PROBE=设定"},
	})
	var got struct {
		Parser string   `json:"parser"`
		Args   []string `json:"args"`
		Stdin  string   `json:"stdin"`
		Env    string   `json:"env"`
		Cwd    string   `json:"cwd"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("probe printed %q: %v", out, err)
	}
	wantWork, err := filepath.EvalSymlinks(work)
	if err != nil {
		t.Fatal(err)
	}
	if got.Parser != "function" || strings.Join(got.Args, "|") != "一|two words" || got.Stdin != "标准输入\n" ||
		got.Env != "设定" || got.Cwd != wantWork {
		t.Fatalf("probe saw %+v; want WARCParser a function, args [一 two words], stdin 标准输入, env 设定, cwd %s", got, wantWork)
	}
}

// recorder is a test that records its failure instead of failing.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.failed = "skipped: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs f with a recorder and returns what it failed with.
func failure(t *testing.T, f func(testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed
}

// TestFailures: an unpinned package fails before npm runs; a failing
// script fails the test with its exit status and what it wrote.
func TestFailures(t *testing.T) {
	for spec, want := range map[string]string{
		"warcio":        `package "warcio" has no version: pin it as name@version`,
		"warcio@^2.4.0": `version "^2.4.0" is not exact`,
	} {
		if got := failure(t, func(tb testing.TB) { Install(tb, spec) }); !strings.Contains(got, want) {
			t.Errorf("Install(%q) failed with %q, want %q", spec, got, want)
		}
	}
	if got := failure(t, func(tb testing.TB) { Install(tb) }); !strings.Contains(got, "no packages given") {
		t.Errorf("Install() failed with %q", got)
	}
	if got := failure(t, func(tb testing.TB) { Install(tb, "ajv@8.20.0", "ajv@8.17.1") }); !strings.Contains(got, "ajv is asked for at 8.20.0 and at 8.17.1") {
		t.Errorf("Install of two versions of ajv failed with %q", got)
	}
	requireNode(t, "fail.mjs") // skipped (or failed under CI) from here without node
	got := failure(t, func(tb testing.TB) {
		Node(tb, Script{Path: filepath.Join("testdata", "fail.mjs"), Args: []string{"x"}})
	})
	if !strings.Contains(got, "node fail.mjs x: exit status 3") || !strings.Contains(got, "the probe failed on purpose") {
		t.Errorf("a failing script failed the test with %q", got)
	}
	got = failure(t, func(tb testing.TB) { Path(tb, t.TempDir(), "warcio", "dist", "index.js") })
	if !strings.Contains(got, "npm package warcio has no dist/index.js") {
		t.Errorf("Path of a missing file failed with %q", got)
	}
}
