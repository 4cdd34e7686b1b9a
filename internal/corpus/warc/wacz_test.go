package warc

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var created = time.Date(2024, 6, 1, 12, 30, 0, 0, time.UTC)

// waczInput writes the test exchanges as WARC files and describes a
// release export of them.
func waczInput(t testing.TB, dir string) (WACZInput, map[string]Exchange) {
	t.Helper()
	exs := exchanges(t)
	in := WACZInput{
		Title:       "广东省政府信息公开 2024-06",
		Description: "zhizhi release 2024-06-01: snapshots of **official** documents.",
		Created:     created,
		Software:    "zhizhi 0.9.0",
		MainPageURL: "http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/content/post_4388123.html?id=7&a=1",
	}
	for _, name := range []string{"utf8", "gb18030", "pdf", "redirect"} {
		path, _ := writeFile(t, dir, name, exs[name])
		in.WARCs = append(in.WARCs, WARCFile("snap-"+name+".warc.gz", path))
		in.Pages = append(in.Pages, WACZPage{URL: exs[name].TargetURI, TS: exs[name].FetchedAt, Title: "页面 " + name})
	}
	return in, exs
}

func TestWACZ(t *testing.T) {
	dir := t.TempDir()
	in, _ := waczInput(t, dir)
	var buf bytes.Buffer
	if err := WriteWACZ(&buf, in); err != nil {
		t.Fatal(err)
	}
	wacz := buf.Bytes()
	zr, err := zip.NewReader(bytes.NewReader(wacz), int64(len(wacz)))
	if err != nil {
		t.Fatalf("the WACZ is not a ZIP: %v", err)
	}
	files := map[string]*zip.File{}
	var names []string
	for _, f := range zr.File {
		files[f.Name] = f
		names = append(names, f.Name)
		if !f.Modified.Equal(created) {
			t.Errorf("%s dated %v, want the package's created time %v", f.Name, f.Modified, created)
		}
	}
	wantNames := []string{
		"archive/snap-utf8.warc.gz", "archive/snap-gb18030.warc.gz", "archive/snap-pdf.warc.gz", "archive/snap-redirect.warc.gz",
		"indexes/index.cdxj", "pages/pages.jsonl", "datapackage.json", "datapackage-digest.json",
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("entries %v, want %v", names, wantNames)
	}
	read := func(name string) []byte {
		rc, err := files[name].Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		return b
	}

	// datapackage.json lists every other file with its true hash and size.
	dpBytes := read("datapackage.json")
	var dp struct {
		Profile     string `json:"profile"`
		WACZVersion string `json:"wacz_version"`
		Title       string `json:"title"`
		Created     string `json:"created"`
		Software    string `json:"software"`
		MainPageURL string `json:"mainPageUrl"`
		Resources   []struct {
			Name  string `json:"name"`
			Path  string `json:"path"`
			Hash  string `json:"hash"`
			Bytes int64  `json:"bytes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(dpBytes, &dp); err != nil {
		t.Fatalf("datapackage.json: %v", err)
	}
	if dp.Profile != "data-package" || dp.WACZVersion != "1.1.1" {
		t.Errorf("profile %q, wacz_version %q; want data-package, 1.1.1", dp.Profile, dp.WACZVersion)
	}
	if dp.Created != "2024-06-01T12:30:00Z" || dp.Title != in.Title || dp.Software != "zhizhi 0.9.0" || dp.MainPageURL != in.MainPageURL {
		t.Errorf("datapackage metadata %+v", dp)
	}
	listed := map[string]bool{}
	for _, r := range dp.Resources {
		listed[r.Path] = true
		b := read(r.Path)
		sum := sha256.Sum256(b)
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != int64(len(b)) {
			t.Errorf("%s: datapackage says %s, %d bytes; the entry is sha256:%x, %d bytes", r.Path, r.Hash, r.Bytes, sum, len(b))
		}
		if r.Name != filepath.Base(r.Path) {
			t.Errorf("%s: resource name %q", r.Path, r.Name)
		}
	}
	for _, n := range wantNames[:6] {
		if !listed[n] {
			t.Errorf("datapackage.json does not list %s", n)
		}
	}
	var digest struct{ Path, Hash string }
	if err := json.Unmarshal(read("datapackage-digest.json"), &digest); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(dpBytes); digest.Path != "datapackage.json" || digest.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("datapackage-digest.json %+v does not match datapackage.json (sha256:%x)", digest, sum)
	}

	// WARCs are stored, byte for byte as given, so a range read finds them.
	for _, w := range in.WARCs {
		f := files["archive/"+w.Name]
		if f.Method != zip.Store {
			t.Errorf("%s compressed again (method %d); WACZ wants it stored", f.Name, f.Method)
		}
		rc, _ := w.Open()
		orig, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(read(f.Name), orig) {
			t.Errorf("%s differs from the WARC given", f.Name)
		}
	}

	// pages.jsonl: the header line, then the pages in order.
	pages := splitLines(string(read("pages/pages.jsonl")))
	if len(pages) != 1+len(in.Pages) {
		t.Fatalf("pages.jsonl has %d lines, want a header and %d pages", len(pages), len(in.Pages))
	}
	var head map[string]string
	json.Unmarshal([]byte(pages[0]), &head)
	if head["format"] != "json-pages-1.0" || head["id"] != "pages" {
		t.Errorf("pages.jsonl header %s", pages[0])
	}
	for i, l := range pages[1:] {
		var p map[string]string
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("pages.jsonl line %d: %v", i+2, err)
		}
		if p["url"] != in.Pages[i].URL || p["ts"] != in.Pages[i].TS.Format(time.RFC3339Nano) || p["title"] != in.Pages[i].Title || p["id"] == "" {
			t.Errorf("pages.jsonl line %d = %s", i+2, l)
		}
	}

	// index.cdxj: sorted, one line per response, each pointing at its
	// record inside the ZIP: offset within the WARC plus the entry's data
	// offset in the WACZ, as ReplayWeb.page reads it with a range request.
	index := splitLines(string(read("indexes/index.cdxj")))
	if len(index) != len(in.WARCs) {
		t.Errorf("index has %d lines, want one response per WARC (%d)", len(index), len(in.WARCs))
	}
	if !slices.IsSorted(index) {
		t.Errorf("index.cdxj is not sorted:\n%s", strings.Join(index, "\n"))
	}
	for _, l := range index {
		e, err := ParseCDXJ(l)
		if err != nil {
			t.Fatal(err)
		}
		f := files["archive/"+e.Filename]
		if f == nil {
			t.Fatalf("index names %q, which is not in archive/", e.Filename)
		}
		at, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		chunk := wacz[at+e.Offset : at+e.Offset+e.Length]
		zr, err := gzip.NewReader(bytes.NewReader(chunk))
		if err != nil {
			t.Fatalf("%s: the bytes at offset %d are not a gzip member: %v", e.Original, e.Offset, err)
		}
		zr.Multistream(false)
		rec, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: record at offset %d, length %d does not inflate: %v", e.Original, e.Offset, e.Length, err)
		}
		head := string(rec[:bytes.Index(rec, []byte("\r\n\r\n"))])
		if !strings.HasPrefix(head, "WARC/1.1\r\n") || !strings.Contains(head, "WARC-Type: response\r\n") ||
			!strings.Contains(head, "WARC-Target-URI: "+e.Original+"\r\n") {
			t.Errorf("index line %s points at\n%s", l, head)
		}
	}

	// The WARCs as stored are read by warcio with no problem, and its
	// indexer gives the same index.
	out := t.TempDir()
	var paths []string
	for _, w := range in.WARCs {
		p := filepath.Join(out, w.Name)
		os.WriteFile(p, read("archive/"+w.Name), 0o644)
		paths = append(paths, p)
	}
	for i, c := range warcioRead(t, paths...) {
		if c.Error != "" || len(c.Problems) > 0 || len(c.Records) != 4 {
			t.Errorf("warcio on %s from the WACZ: %d records, %s %v", in.WARCs[i].Name, len(c.Records), c.Error, c.Problems)
		}
	}
	theirs := warcioCDX(t, paths...)
	slices.Sort(theirs)
	if !reflect.DeepEqual(theirs, index) {
		t.Errorf("index.cdxj:\n%s\nwarcio cdx-index of the archived WARCs:\n%s", strings.Join(index, "\n"), strings.Join(theirs, "\n"))
	}
}

func TestWACZIsReproducible(t *testing.T) {
	in, _ := waczInput(t, t.TempDir())
	var a, b bytes.Buffer
	if err := WriteWACZ(&a, in); err != nil {
		t.Fatal(err)
	}
	if err := WriteWACZ(&b, in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same release exported twice gave different WACZ bytes")
	}
}

func TestWACZRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	in, _ := waczInput(t, dir)

	// A WARC damaged on disk: one byte of its response body changed.
	damaged := filepath.Join(dir, "damaged.warc.gz")
	ex := exchanges(t)["pdf"]
	var b bytes.Buffer
	recs, _ := Write(&b, ex)
	dec := member(t, b.Bytes(), recs[1])
	dec[len(dec)-100] ^= 0x20
	os.WriteFile(damaged, replaceMember(t, b.Bytes(), recs[1], dec), 0o644)

	tests := []struct {
		name   string
		change func(*WACZInput)
		want   string
	}{
		{"no created", func(in *WACZInput) { in.Created = time.Time{} }, "Created is required"},
		{"created before ZIP dates", func(in *WACZInput) { in.Created = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) }, "1980–2107"},
		{"no WARCs", func(in *WACZInput) { in.WARCs = nil }, "no WARC files"},
		{"upper-case name", func(in *WACZInput) { in.WARCs[0].Name = "Snap.warc.gz" }, "must be lowercase"},
		{"not .warc.gz", func(in *WACZInput) { in.WARCs[0].Name = "snap.warc" }, "end in .warc.gz"},
		{"same name twice", func(in *WACZInput) { in.WARCs[1].Name = in.WARCs[0].Name }, "given twice"},
		{"page without time", func(in *WACZInput) { in.Pages[0].TS = time.Time{} }, "needs both URL and TS"},
		{"damaged WARC", func(in *WACZInput) { in.WARCs = append(in.WARCs, WARCFile("damaged.warc.gz", damaged)) }, recs[1].ID},
		{"missing WARC", func(in *WACZInput) { in.WARCs = append(in.WARCs, WARCFile("gone.warc.gz", filepath.Join(dir, "gone"))) }, "gone.warc.gz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := in
			c.WARCs = slices.Clone(in.WARCs)
			c.Pages = slices.Clone(in.Pages)
			tt.change(&c)
			err := WriteWACZ(io.Discard, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("WriteWACZ error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
