package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestStaticSitesServeRanges: the static sites answer byte ranges as nginx
// does, awkward parts included; the dynamic ones ignore them; the access
// log counts what each answer carried.
func TestStaticSitesServeRanges(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	var page, dynamic string
	for _, a := range w.Truth() {
		if a.Host == "www.news.test" && page == "" {
			page = a.URL
		}
		if a.Host == "www.qingcheng.gov.test" && dynamic == "" {
			dynamic = a.URL
		}
	}
	whole := get(t, c, "GET", page, "Accept-Encoding", "identity")
	if whole.status != 200 || len(whole.body) <= 64<<10 {
		t.Fatalf("news page: %d, %d bytes; want a 200 over 64 KiB", whole.status, len(whole.body))
	}
	n := len(whole.body)
	etag := whole.header.Get("ETag")
	id := "Accept-Encoding"

	for _, tc := range []struct {
		name    string
		headers []string
		status  int
		want    []byte // body
		crange  string // Content-Range
	}{
		{"a head", []string{id, "identity", "Range", "bytes=0-99"}, 206, whole.body[:100], fmt.Sprintf("bytes 0-99/%d", n)},
		{"past the end is clamped", []string{id, "identity", "Range", fmt.Sprintf("bytes=0-%d", n+1000)}, 206, whole.body, fmt.Sprintf("bytes 0-%d/%d", n-1, n)},
		{"open end", []string{id, "identity", "Range", fmt.Sprintf("bytes=%d-", n-5)}, 206, whole.body[n-5:], fmt.Sprintf("bytes %d-%d/%d", n-5, n-1, n)},
		{"suffix", []string{id, "identity", "Range", "bytes=-10"}, 206, whole.body[n-10:], fmt.Sprintf("bytes %d-%d/%d", n-10, n-1, n)},
		{"start past the end", []string{id, "identity", "Range", fmt.Sprintf("bytes=%d-", n)}, 416, []byte{}, fmt.Sprintf("bytes */%d", n)},
		{"several ranges", []string{id, "identity", "Range", "bytes=0-9,20-29"}, 200, whole.body, ""},
		{"another unit", []string{id, "identity", "Range", "items=0-9"}, 200, whole.body, ""},
		{"If-Range matches", []string{id, "identity", "Range", "bytes=0-9", "If-Range", etag}, 206, whole.body[:10], fmt.Sprintf("bytes 0-9/%d", n)},
		{"If-Range stale", []string{id, "identity", "Range", "bytes=0-9", "If-Range", `"stale"`}, 200, whole.body, ""},
		{"304 wins", []string{id, "identity", "Range", "bytes=0-9", "If-None-Match", etag}, 304, []byte{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, c, "GET", page, tc.headers...)
			if r.status != tc.status || !bytes.Equal(r.body, tc.want) || r.header.Get("Content-Range") != tc.crange {
				t.Errorf("%d, %d bytes, Content-Range %q; want %d, %d bytes, %q",
					r.status, len(r.body), r.header.Get("Content-Range"), tc.status, len(tc.want), tc.crange)
			}
		})
	}

	// Compressing on the fly, nginx drops the range: the whole page, gzipped.
	w.ResetLog()
	gz := get(t, c, "GET", page, id, "gzip", "Range", "bytes=0-99")
	if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip with a range: %d, %q; want the whole page gzipped", gz.status, gz.header.Get("Content-Encoding"))
	}
	head := get(t, c, "GET", page, id, "identity", "Range", "bytes=0-99")
	log := w.AccessLog("www.news.test")
	if len(log) != 2 || log[0].Bytes != int64(len(gz.body)) || log[0].ContentBytes != int64(n) ||
		log[1].Status != 206 || log[1].Bytes != 100 || log[1].ContentBytes != 100 || len(head.body) != 100 {
		t.Errorf("access log %+v; want the gzipped page (%d bytes carrying %d) and a 100-byte 206", log, len(gz.body), n)
	}

	// A page built per request ignores Range, and so does a static site
	// under the no_range fault.
	if r := get(t, c, "GET", dynamic, id, "identity", "Range", "bytes=0-99"); r.status != 200 || len(r.body) <= 100 {
		t.Errorf("dynamic page with a range: %d, %d bytes; want the whole page", r.status, len(r.body))
	}
	if err := w.SetFault("www.news.test", Fault{Kind: FaultNoRange}); err != nil {
		t.Fatal(err)
	}
	if r := get(t, c, "GET", page, id, "identity", "Range", "bytes=0-99"); r.status != 200 || len(r.body) != n ||
		strings.Contains(r.header.Get("Accept-Ranges"), "bytes") {
		t.Errorf("no_range: %d, %d bytes, Accept-Ranges %q; want the whole page", r.status, len(r.body), r.header.Get("Accept-Ranges"))
	}
}
