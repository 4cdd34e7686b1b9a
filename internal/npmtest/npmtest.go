// Package npmtest is for tests only: it installs pinned npm packages
// (independent, real consumers of what zhizhi writes) once into the
// user's cache, and runs node scripts against them. Nothing here ships.
//
// Without node and npm a test that needs them is skipped, except when the
// CI environment variable is set: there a missing tool fails the test.
package npmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// installMu keeps parallel tests of one process from installing the same
// packages twice; separate processes meet at the atomic rename instead.
var installMu sync.Mutex

// Install installs packages, each pinned as "name@version" with an exact
// version (for example "warcio@2.4.11" or "@redocly/cli@2.77.0"), with one
// npm install into a cache directory keyed by the package list, and
// returns that directory: the install prefix, holding node_modules.
//
// The install happens once per package list: into a fresh directory
// beside the cache entry, checked (every package present at its version)
// and then renamed into place, so an interrupted run never leaves a half
// copy to be trusted, and parallel test processes that race each keep a
// complete one. A spec that is not name@exact-version fails the test.
func Install(t testing.TB, packages ...string) string {
	t.Helper()
	if len(packages) == 0 {
		t.Fatal("npmtest.Install: no packages given; name each as name@version")
	}
	want := make(map[string]string, len(packages))
	for _, p := range packages {
		name, version, err := parseSpec(p)
		if err != nil {
			t.Fatalf("npmtest.Install: %v", err)
		}
		if v, dup := want[name]; dup && v != version {
			t.Fatalf("npmtest.Install: %s is asked for at %s and at %s; give one version", name, v, version)
		}
		want[name] = version
	}
	npm := requireTools(t, packages)
	dir := cacheDir(packages)
	if missing := check(dir, want); missing == "" {
		return dir
	}
	installMu.Lock()
	defer installMu.Unlock()
	if missing := check(dir, want); missing == "" {
		return dir // another test of this process installed it meanwhile
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatalf("npmtest: make the cache directory %s: %v", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		t.Fatalf("npmtest: %v", err)
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp}, packages...)
	cmd := exec.CommandContext(t.Context(), npm, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", strings.Join(packages, " "), err, out)
	}
	if missing := check(tmp, want); missing != "" {
		t.Fatalf("npm install %s left %s in %s", strings.Join(packages, " "), missing, tmp)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if missing := check(dir, want); missing != "" {
			t.Fatalf("npmtest: keep %s in %s: %v (there: %s); remove that directory to have it installed again",
				strings.Join(packages, " "), dir, err, missing)
		}
		// Another process renamed its complete copy first.
	}
	return dir
}

// Path returns the path of elem inside package name installed under
// prefix (prefix/node_modules/name/elem...), failing the test when the
// package has no such file.
func Path(t testing.TB, prefix, name string, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{prefix, "node_modules", name}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("npm package %s has no %s: %v", name, filepath.Join(elem...), err)
	}
	return p
}

// FileURL is the file: URL of an absolute path, for a script's
// `await import(url)`.
func FileURL(path string) string {
	return "file://" + filepath.ToSlash(path)
}

// Script is one run of node.
type Script struct {
	// Path is the script (or a package's command file) to run; relative
	// paths are made absolute from the test's working directory.
	Path string
	// Args follow the script on node's command line.
	Args []string
	// Stdin is the script's standard input (none when nil).
	Stdin []byte
	// Dir is the working directory; empty means the test's.
	Dir string
	// Env is added to the test's environment ("NAME=value").
	Env []string
}

// Node runs s with node and returns its standard output. A script that
// exits with an error fails the test, showing what it printed; what it
// wrote to standard error is logged. Without node the test is skipped,
// except under CI, where that is a failure.
func Node(t testing.TB, s Script) []byte {
	t.Helper()
	node := requireNode(t, filepath.Base(s.Path))
	script, err := filepath.Abs(s.Path)
	if err != nil {
		t.Fatalf("npmtest: script %s: %v", s.Path, err)
	}
	cmd := exec.CommandContext(t.Context(), node, append([]string{script}, s.Args...)...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	if s.Stdin != nil {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	// A script that spawns a child holding the output pipes open is not
	// waited for past this once it has exited itself.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		t.Fatalf("node %s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(script), strings.Join(s.Args, " "), err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node %s stderr:\n%s", filepath.Base(script), stderr.String())
	}
	return stdout.Bytes()
}

// requireTools returns npm's path once node and npm are both found; see
// missingTool for what happens when one is not.
func requireTools(t testing.TB, packages []string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		missingTool(t, "install "+strings.Join(packages, " "), err)
	}
	return npm
}

func requireNode(t testing.TB, script string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missingTool(t, "run "+script, err)
	}
	return node
}

// missingTool skips the test, or fails it when CI is set.
func missingTool(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("node and npm are needed to %s: %v", what, err)
	}
	t.Skipf("node or npm missing (%v), needed to %s (apt-get install nodejs npm); CI=true makes this a failure", err, what)
}

// A package is pinned as name@version with an exact semantic version: no
// ranges, tags or URLs, so every run installs the same code.
var (
	nameRE    = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// parseSpec splits "name@version", refusing anything but an exact
// version of a valid package name.
func parseSpec(spec string) (name, version string, err error) {
	at := strings.LastIndexByte(spec, '@')
	if at <= 0 {
		return "", "", fmt.Errorf("package %q has no version: pin it as name@version, for example warcio@2.4.11", spec)
	}
	name, version = spec[:at], spec[at+1:]
	if !nameRE.MatchString(name) {
		return "", "", fmt.Errorf("package %q: %q is not an npm package name", spec, name)
	}
	if !versionRE.MatchString(version) {
		return "", "", fmt.Errorf("package %q: version %q is not exact; pin one version such as 1.2.3", spec, version)
	}
	return name, version, nil
}

// cacheDir is where packages are kept: one directory per package list,
// named by a digest of the sorted specs (or by the single spec when
// there is one, for a reader of the cache).
func cacheDir(packages []string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sorted := slices.Sorted(slices.Values(packages))
	sorted = slices.Compact(sorted)
	sum := sha256.New()
	for _, p := range sorted {
		sum.Write([]byte(p + "\n"))
	}
	label := "npm"
	if len(sorted) == 1 {
		label = strings.NewReplacer("@", "", "/", "-").Replace(sorted[0][:strings.LastIndexByte(sorted[0], '@')])
	}
	return filepath.Join(cache, "zhizhi-test", label+"-"+hex.EncodeToString(sum.Sum(nil))[:12])
}

// check returns "" when every wanted package is installed under prefix
// at its version, else what is missing.
func check(prefix string, want map[string]string) string {
	var missing []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		b, err := os.ReadFile(filepath.Join(prefix, "node_modules", name, "package.json"))
		if err != nil {
			missing = append(missing, name+"@"+want[name]+" (not installed)")
			continue
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != want[name] {
			missing = append(missing, fmt.Sprintf("%s@%s (found %q)", name, want[name], pkg.Version))
		}
	}
	return strings.Join(missing, ", ")
}
