package fetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// TestHeadReadTakesOnlyItsBytes: a head read asks for its bytes (Range,
// uncompressed); a site that honours it sends no more, one that ignores it
// is read up to the head and hung up on. Either way crawl_log counts what
// came over the wire, the head at most, and the site's log agrees when the
// site sent no more than was read.
func TestHeadReadTakesOnlyItsBytes(t *testing.T) {
	const news = "www.news.test" // static files, ranges honoured
	const head = 1000
	e := newSimEnv(t, 1, ClientOptions{})
	e.advancing(t, true)
	page := truthURL(t, e.w, news, "/news/")
	whole := plainGet(t, e.w, page)
	if len(whole) <= head {
		t.Fatalf("page of %d bytes; the test needs one over %d", len(whole), head)
	}

	// Honoured: a 206 with the head and nothing more.
	r := mustDo(t, e.c, Request{URL: page, Purpose: model.PurposeDetail, Head: true, MaxBytes: head})
	if r.Status != http.StatusPartialContent || !r.Truncated || !bytes.Equal(r.Body, whole[:head]) || r.WireBytes != head {
		t.Errorf("honoured: status %d, truncated %v, %d bytes (%d on the wire); want 206, truncated, the first %d bytes",
			r.Status, r.Truncated, len(r.Body), r.WireBytes, head)
	}
	// Larger than the page: the whole page, not truncated.
	r = mustDo(t, e.c, Request{URL: page, Purpose: model.PurposeDetail, Head: true, MaxBytes: int64(len(whole)) + 10})
	if r.Truncated || !bytes.Equal(r.Body, whole) {
		t.Errorf("head larger than the page: truncated %v, %d bytes; want the whole %d-byte page", r.Truncated, len(r.Body), len(whole))
	}
	// Ignored: read up to the head, no further, and marked truncated.
	if err := e.w.SetFault(news, sim.Fault{Kind: sim.FaultNoRange}); err != nil {
		t.Fatal(err)
	}
	r = mustDo(t, e.c, Request{URL: page, Purpose: model.PurposeDetail, Head: true, MaxBytes: head})
	if r.Status != http.StatusOK || !r.Truncated || !bytes.Equal(r.Body, whole[:head]) || r.WireBytes != head {
		t.Errorf("ignored: status %d, truncated %v, %d bytes (%d on the wire); want 200, truncated, the first %d bytes",
			r.Status, r.Truncated, len(r.Body), r.WireBytes, head)
	}

	site := e.w.AccessLog(news)
	rows := crawlLogRows(t, e.st, news)
	var logged []int64
	for i := len(rows) - 1; i >= 0; i-- { // oldest first, as the site's log
		if rows[i].Purpose == model.PurposeDetail {
			logged = append(logged, rows[i].Bytes)
		}
	}
	var sent []int64
	for _, a := range site {
		if a.Path != "/robots.txt" && a.UserAgent == e.c.UserAgent() {
			sent = append(sent, a.Bytes)
		}
	}
	want := []int64{head, int64(len(whole)), head}
	if len(logged) != 3 || logged[0] != want[0] || logged[1] != want[1] || logged[2] != want[2] {
		t.Errorf("crawl_log bytes %v, want %v", logged, want)
	}
	// The site's side: the two honoured reads sent exactly what was read;
	// the ignored one pushed the whole page before zhizhi hung up.
	if len(sent) != 3 || sent[0] != head || sent[1] != int64(len(whole)) || sent[2] != int64(len(whole)) {
		t.Errorf("the site sent %v, want [%d %d %d]", sent, head, len(whole), len(whole))
	}
}

// TestFailedReadCountsWhatCame: a body cut short by the time limit still
// counts, in crawl_log, the status and the bytes that came before: the
// site spent them.
func TestFailedReadCountsWhatCame(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{Limits: Limits{RequestTimeout: 2 * time.Second}})
	e.advancing(t, true)
	page := truthURL(t, e.w, qingcheng, "/")
	mustDo(t, e.c, Request{URL: "http://" + qingcheng + "/robots.txt", Purpose: model.PurposeRobots})
	// 200 bytes a second: a page of several KiB cannot come within 2 s.
	if err := e.w.SetFault(qingcheng, sim.Fault{Kind: sim.FaultSlow, BytesPerSec: 200, PathPrefix: "/q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Do(context.Background(), Request{URL: page, Purpose: model.PurposeDetail}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("slow page: %v, want a timeout", err)
	}
	rows := crawlLogRows(t, e.st, qingcheng)
	row := rows[0] // newest first
	// The site logs the request once its handler notices the hang-up.
	var sent int64
	for logged := false; !logged; time.Sleep(10 * time.Millisecond) {
		for _, a := range e.w.AccessLog(qingcheng) {
			if "http://"+qingcheng+a.Path == page {
				sent, logged = a.Bytes, true
			}
		}
	}
	if row.HTTPStatus == nil || *row.HTTPStatus != 200 || row.ErrorClass != ClassTimeout || row.Bytes <= 0 || row.Bytes > sent || row.DurationMS == nil {
		t.Errorf("crawl_log row: status %v, class %q, %d bytes, duration %v; want 200, timeout, 1…%d bytes (what the site sent) and a duration",
			row.HTTPStatus, row.ErrorClass, row.Bytes, row.DurationMS, sent)
	}
}
