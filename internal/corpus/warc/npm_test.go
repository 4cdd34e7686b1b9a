package warc

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"zhizhi/internal/npmtest"
)

// warcioVersion is the npm warcio (warcio.js) the tests read WARCs with:
// an independent reader, test-only, never shipped.
const warcioVersion = "2.4.11"

// warcio installs warcio.js into the user's cache once and returns the
// install prefix. Without node and npm the test is skipped, except under
// CI=true, where that is a failure.
func warcio(t testing.TB) string {
	t.Helper()
	return npmtest.Install(t, "warcio@"+warcioVersion)
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
	entry := npmtest.FileURL(npmtest.Path(t, dir, "warcio", "dist", "index.js"))
	out := npmtest.Node(t, npmtest.Script{Path: filepath.Join("testdata", "check.mjs"), Args: append([]string{entry}, paths...), Dir: dir})
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
	cli := npmtest.Path(t, dir, "warcio", "dist", "cli.js")
	out := npmtest.Node(t, npmtest.Script{Path: cli, Args: append([]string{"cdx-index"}, paths...), Dir: dir})
	return splitLines(string(out))
}
