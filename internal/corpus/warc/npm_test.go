package warc

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// warcioVersion is the npm warcio (warcio.js) the tests read WARCs with:
// an independent reader, test-only, never shipped.
const warcioVersion = "2.4.11"

// warcio installs warcio.js into the user's cache once and returns its
// directory. Without node and npm the test is skipped, except under
// CI=true, where that is a failure.
func warcio(t testing.TB) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are needed to read WARCs with warcio.js: %v", err)
		}
		t.Skipf("node or npm missing (%v); CI=true makes this a failure", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "zhizhi-test", "warcio-"+warcioVersion)
	entry := filepath.Join(dir, "node_modules", "warcio", "dist", "index.js")
	if _, err := os.Stat(entry); errors.Is(err, fs.ErrNotExist) {
		// Installed beside and moved into place, so a run interrupted
		// half-way never leaves a broken copy to be trusted.
		tmp := dir + ".tmp-" + strconv.Itoa(os.Getpid())
		os.RemoveAll(tmp)
		cmd := exec.CommandContext(t.Context(), npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp,
			"warcio@"+warcioVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			t.Fatalf("npm install warcio@%s: %v\n%s", warcioVersion, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(entry); serr != nil {
				t.Fatalf("install warcio into %s: %v", dir, err)
			}
		}
	}
	return dir
}

// warcioRecord is what testdata/check.mjs reports for one record.
type warcioRecord struct {
	ID              string            `json:"id"`
	Type            string            `json:"type"`
	Target          string            `json:"target"`
	Date            string            `json:"date"`
	ConcurrentTo    string            `json:"concurrentTo"`
	ContentType     string            `json:"contentType"`
	Offset          int64             `json:"offset"`
	Length          int64             `json:"length"`
	ContentLength   int64             `json:"contentLength"`
	BlockLength     int64             `json:"blockLength"`
	RecordedBlock   string            `json:"recordedBlock"`
	ComputedBlock   string            `json:"computedBlock"`
	RecordedPayload string            `json:"recordedPayload"`
	ComputedPayload string            `json:"computedPayload"`
	BlockText       string            `json:"blockText"`
	Status          int               `json:"status"`
	StatusLine      string            `json:"statusline"`
	HTTPHeaders     map[string]string `json:"httpHeaders"`
	PayloadB64      string            `json:"payloadB64"`
}

type warcioCheck struct {
	Records  []warcioRecord `json:"records"`
	Problems []string       `json:"problems"`
	Error    string         `json:"error"`
}

// warcioRead runs testdata/check.mjs over WARC files (one node process
// for all): warcio.js parses every record and its serializer recomputes
// block and payload digests. It returns one check per path, in order.
func warcioRead(t testing.TB, paths ...string) []warcioCheck {
	t.Helper()
	dir := warcio(t)
	script, err := filepath.Abs(filepath.Join("testdata", "check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	entry := "file://" + filepath.ToSlash(filepath.Join(dir, "node_modules", "warcio", "dist", "index.js"))
	cmd := exec.CommandContext(t.Context(), "node", append([]string{script, entry}, paths...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("node check.mjs %v: %v\n%s", paths, err, ee.Stderr)
		}
		t.Fatalf("node check.mjs %v: %v", paths, err)
	}
	var c []warcioCheck
	if err := json.Unmarshal(out, &c); err != nil || len(c) != len(paths) {
		t.Fatalf("check.mjs output is not %d JSON results: %v\n%s", len(paths), err, out)
	}
	return c
}

// warcioCDX runs warcio.js's own indexer (`warcio cdx-index`) over files
// and returns its CDXJ lines.
func warcioCDX(t testing.TB, paths ...string) []string {
	t.Helper()
	dir := warcio(t)
	args := append([]string{filepath.Join(dir, "node_modules", "warcio", "dist", "cli.js"), "cdx-index"}, paths...)
	cmd := exec.CommandContext(t.Context(), "node", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("warcio cdx-index: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("warcio cdx-index: %v", err)
	}
	return splitLines(string(out))
}
