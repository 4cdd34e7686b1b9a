package warc

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// gb18030 encodes s as GB18030, the way many Chinese government portals
// still serve their pages.
func gb18030(t testing.TB, s string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pdfLike is a binary body that looks like a PDF and holds every byte
// value, NULs and CRLFCRLF sequences that a careless HTTP splitter would
// stumble on.
func pdfLike() []byte {
	r := rand.New(rand.NewPCG(18, 11))
	b := []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n\r\n\r\n")
	for i := 0; i < 4096; i++ {
		b = append(b, byte(r.UintN(256)))
	}
	for i := 0; i < 256; i++ {
		b = append(b, byte(i))
	}
	return append(b, "\r\n\r\n%%EOF\n"...)
}

var fetched = time.Date(2024, 5, 1, 8, 0, 0, 123456000, time.UTC)

// exchanges are the snapshots the tests archive: a UTF-8 page under a
// Chinese path, a GB18030 page whose crawler kept only a few headers, a
// PDF-like attachment, and a redirect with no body.
func exchanges(t testing.TB) map[string]Exchange {
	meta := func(id string) map[string]string {
		return map[string]string{
			"provider":       "广东省人民政府门户网站",
			"crawl-log-id":   id,
			"robots":         "allowed",
			"access":         "full",
			"rights":         "政府信息公开（依申请公开除外）",
			"trust":          "official",
			"zhizhi-version": "0.9.0",
		}
	}
	return map[string]Exchange{
		"utf8": {
			TargetURI:      "http://www.gd.gov.cn/zwgk/政策/content/post_4388123.html?id=7&a=1",
			RequestHeader:  http.Header{"User-Agent": {"zhizhi/0.9 (+https://example.org/bot)"}, "Accept": {"text/html"}},
			Status:         200,
			ResponseHeader: http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Etag": {`"5f3a-1"`}, "Content-Encoding": {"gzip"}},
			Body:           []byte("<html><head><title>广东省人民政府关于印发政策的通知</title></head><body>正文：第一条……</body></html>"),
			FetchedAt:      fetched,
			IP:             "10.0.0.7",
			Metadata:       meta("1001"),
			Software:       "zhizhi/0.9.0",
		},
		"gb18030": {
			TargetURI:            "https://www.sz.gov.cn/cn/xxgk/zfxxgj/tzgg/content/post_11.html",
			Status:               200,
			ResponseHeader:       http.Header{"Content-Type": {"text/html; charset=GB18030"}},
			Body:                 gb18030(t, "<html><title>深圳市人民政府办公厅通知</title><p>各区人民政府，市政府直属各单位：𠀀</p></html>"),
			FetchedAt:            fetched.Add(time.Hour),
			HeadersReconstructed: true,
			Metadata:             meta("1002"),
		},
		"pdf": {
			TargetURI:      "http://www.gd.gov.cn/attachment/0/531/531123/4388123.pdf",
			Status:         200,
			ResponseHeader: http.Header{"Content-Type": {"application/pdf"}, "Content-Disposition": {`attachment; filename="4388123.pdf"`}},
			Body:           pdfLike(),
			FetchedAt:      fetched.Add(2 * time.Hour),
			Metadata:       meta("1003"),
		},
		"redirect": {
			TargetURI:      "http://gd.gov.cn/",
			Status:         301,
			ResponseHeader: http.Header{"Location": {"http://www.gd.gov.cn/"}},
			FetchedAt:      fetched.Add(3 * time.Hour),
			Metadata:       meta("1004"),
		},
	}
}

// writeFile writes one exchange as its own WARC file in dir.
func writeFile(t testing.TB, dir, name string, ex Exchange) (string, []Record) {
	t.Helper()
	var b bytes.Buffer
	recs, err := Write(&b, ex)
	if err != nil {
		t.Fatalf("Write %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".warc.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

func TestWriteRecordsAndVerifyAgree(t *testing.T) {
	for name, ex := range exchanges(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			recs, err := Write(&b, ex)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, r := range recs {
				types = append(types, r.Type)
			}
			if want := []string{"warcinfo", "response", "request", "metadata"}; !reflect.DeepEqual(types, want) {
				t.Fatalf("record types %v, want %v", types, want)
			}
			if end := recs[3].Offset + recs[3].Length; end != int64(b.Len()) {
				t.Errorf("records end at %d, file is %d bytes", end, b.Len())
			}
			got, err := Verify(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("Verify of a file Write just wrote: %v", err)
			}
			if !reflect.DeepEqual(got, recs) {
				t.Errorf("Verify read\n%+v\nWrite returned\n%+v", got, recs)
			}
			if recs[1].Status != ex.Status {
				t.Errorf("response status %d, want %d", recs[1].Status, ex.Status)
			}
			if !strings.HasPrefix(recs[1].PayloadDigest, "sha256:") || len(recs[1].PayloadDigest) != len("sha256:")+64 {
				t.Errorf("payload digest %q is not sha256 hex", recs[1].PayloadDigest)
			}
		})
	}
}

// TestWriteLargeBodyStaysInMemory writes a 3 MiB attachment with TMPDIR
// pointing nowhere: it must succeed and verify, so no temporary file was
// needed on the way.
func TestWriteLargeBodyStaysInMemory(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "absent"))
	ex := exchanges(t)["pdf"]
	body := bytes.Repeat(pdfLike(), 3<<20/len(pdfLike())+1)
	ex.Body = body
	var b bytes.Buffer
	recs, err := Write(&b, ex)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Verify(bytes.NewReader(b.Bytes()))
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Fatalf("Verify: %v", err)
	}
	if resp := member(t, b.Bytes(), recs[1]); !bytes.HasSuffix(resp, append(body, "\r\n\r\n"...)) {
		t.Error("the 3 MiB body did not come back whole")
	}
}

func TestWriteIsReproducible(t *testing.T) {
	ex := exchanges(t)["utf8"]
	var a, b bytes.Buffer
	if _, err := Write(&a, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&b, ex); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same exchange written twice gave different bytes; a content address would change")
	}
	later := ex
	later.FetchedAt = ex.FetchedAt.Add(time.Second)
	r1, _ := Write(&bytes.Buffer{}, ex)
	r2, _ := Write(&bytes.Buffer{}, later)
	for i := range r1 {
		if r1[i].ID == r2[i].ID {
			t.Errorf("%s record ID %s is the same for two fetches a second apart", r1[i].Type, r1[i].ID)
		}
	}
}

func TestWriteRejectsBadExchanges(t *testing.T) {
	good := exchanges(t)["utf8"]
	tests := []struct {
		name   string
		change func(*Exchange)
		want   string
	}{
		{"no target", func(e *Exchange) { e.TargetURI = "" }, "no TargetURI"},
		{"ftp target", func(e *Exchange) { e.TargetURI = "ftp://example.org/a" }, "not an absolute http or https URL"},
		{"relative target", func(e *Exchange) { e.TargetURI = "/zwgk/a.html" }, "not an absolute http or https URL"},
		{"no fetch time", func(e *Exchange) { e.FetchedAt = time.Time{} }, "no FetchedAt"},
		{"no status", func(e *Exchange) { e.Status = 0 }, "HTTP status 0"},
		{"bad IP", func(e *Exchange) { e.IP = "gd.gov.cn" }, "not an IP address"},
		{"header injection", func(e *Exchange) {
			e.ResponseHeader = http.Header{"Set-Cookie": {"a=1\r\nX-Evil: 1"}}
		}, "line break"},
		{"bad header name", func(e *Exchange) { e.ResponseHeader = http.Header{"Bad Name": {"x"}} }, "not an HTTP token"},
		{"bad metadata name", func(e *Exchange) { e.Metadata = map[string]string{"来源": "x"} }, "not a token"},
		{"multi-line metadata", func(e *Exchange) { e.Metadata = map[string]string{"rights": "a\nb"} }, "line break"},
		{"reserved metadata", func(e *Exchange) { e.Metadata = map[string]string{"headers-reconstructed": "false"} }, "written by this package"},
		{"bad method", func(e *Exchange) { e.Method = "GET /" }, "not an HTTP token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := good
			tt.change(&ex)
			var b bytes.Buffer
			_, err := Write(&b, ex)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write error %v, want one saying %q", err, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("Write wrote %d bytes before failing; a bad exchange must leave nothing half-written", b.Len())
			}
		})
	}
}

// TestIndependentReader has warcio.js read every record back, recompute
// its block and payload digests, and compares what it read with what was
// written.
func TestIndependentReader(t *testing.T) {
	dir := t.TempDir()
	exs := exchanges(t)
	names := []string{"utf8", "gb18030", "pdf", "redirect"}
	var paths []string
	written := map[string][]Record{}
	for _, name := range names {
		path, recs := writeFile(t, dir, name, exs[name])
		paths = append(paths, path)
		written[name] = recs
	}
	checks := warcioRead(t, paths...)
	for i, name := range names {
		ex, recs, c := exs[name], written[name], checks[i]
		t.Run(name, func(t *testing.T) {
			if c.Error != "" {
				t.Fatalf("warcio could not read the file: %s", c.Error)
			}
			if len(c.Problems) > 0 {
				t.Fatalf("warcio found problems in a freshly written file:\n%s", strings.Join(c.Problems, "\n"))
			}
			if len(c.Records) != 4 {
				t.Fatalf("warcio read %d records, want 4 (warcinfo, response, request, metadata)", len(c.Records))
			}
			for i, w := range c.Records {
				r := recs[i]
				if w.ID != r.ID || w.Type != r.Type || w.Offset != r.Offset || w.Length != r.Length {
					t.Errorf("record %d: warcio read %s %s at %d+%d, Write returned %s %s at %d+%d",
						i, w.Type, w.ID, w.Offset, w.Length, r.Type, r.ID, r.Offset, r.Length)
				}
				if w.ComputedBlock != w.RecordedBlock || w.RecordedBlock != r.BlockDigest {
					t.Errorf("%s: block digest recorded %s, warcio computed %s, Write returned %s", w.Type, w.RecordedBlock, w.ComputedBlock, r.BlockDigest)
				}
				// WARC 1.1 dates keep fractions of a second.
				if !strings.HasSuffix(w.Date, ":00:00.123456Z") || !strings.HasPrefix(w.Date, "2024-05-01T") {
					t.Errorf("%s: WARC-Date %q, want the fetch time with its microseconds", w.Type, w.Date)
				}
			}
			resp, req, meta := c.Records[1], c.Records[2], c.Records[3]

			// Target, status and body bytes as the crawler had them.
			wantTarget := ex.TargetURI
			if name == "utf8" {
				wantTarget = "http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/content/post_4388123.html?id=7&a=1"
			}
			for _, w := range []warcioRecord{resp, req, meta} {
				if w.Target != wantTarget {
					t.Errorf("%s: WARC-Target-URI %q, want %q", w.Type, w.Target, wantTarget)
				}
			}
			if resp.Status != ex.Status {
				t.Errorf("status %d, want %d", resp.Status, ex.Status)
			}
			body, err := base64.StdEncoding.DecodeString(resp.PayloadB64)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, ex.Body) {
				t.Errorf("warcio read a %d-byte body, %d bytes were written", len(body), len(ex.Body))
			}
			if resp.ComputedPayload != resp.RecordedPayload || resp.RecordedPayload != recs[1].PayloadDigest {
				t.Errorf("payload digest recorded %s, warcio computed %s", resp.RecordedPayload, resp.ComputedPayload)
			}
			if req.ComputedPayload != req.RecordedPayload {
				t.Errorf("request payload digest recorded %s, warcio computed %s", req.RecordedPayload, req.ComputedPayload)
			}
			if resp.ContentType != "application/http;msgtype=response" || req.ContentType != "application/http;msgtype=request" {
				t.Errorf("Content-Types %q and %q", resp.ContentType, req.ContentType)
			}
			if req.ConcurrentTo != resp.ID || meta.ConcurrentTo != resp.ID {
				t.Errorf("request and metadata are concurrent to %q and %q, want the response %q", req.ConcurrentTo, meta.ConcurrentTo, resp.ID)
			}
			if got := resp.HTTPHeaders["Content-Length"]; got != strconv.Itoa(len(ex.Body)) {
				t.Errorf("HTTP Content-Length %q, want %d", got, len(ex.Body))
			}
			if _, ok := resp.HTTPHeaders["Content-Encoding"]; ok {
				t.Error("Content-Encoding kept for a body that is stored decoded")
			}

			// Every metadata field the intake declared, and the ones this
			// package adds.
			for k, v := range ex.Metadata {
				if !strings.Contains(meta.BlockText, k+": "+v+"\r\n") {
					t.Errorf("metadata record lacks %q; it holds:\n%s", k+": "+v, meta.BlockText)
				}
			}
			wantRecon := "headers-reconstructed: false\r\n"
			if ex.HeadersReconstructed {
				wantRecon = "headers-reconstructed: true\r\n"
			}
			if !strings.Contains(meta.BlockText, wantRecon) {
				t.Errorf("metadata lacks %q:\n%s", wantRecon, meta.BlockText)
			}
			if name == "utf8" && !strings.Contains(meta.BlockText, "dropped-header: Content-Encoding: gzip\r\n") {
				t.Errorf("metadata does not say Content-Encoding was dropped:\n%s", meta.BlockText)
			}
			if info := c.Records[0].BlockText; !strings.Contains(info, "format: WARC File Format 1.1\r\n") {
				t.Errorf("warcinfo lacks the format field:\n%s", info)
			}
		})
	}
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}
