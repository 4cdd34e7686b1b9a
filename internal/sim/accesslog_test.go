package sim

import (
	"testing"
)

// TestAccessLogHasEveryDeliveredAnswer: the site writes a request's log
// entry when its handler returns, which can be after the client has read
// the whole answer (a flushed body, a busy machine). Whoever reads the log
// after the answer arrived must find the request there: tests compare the
// log with what the crawler recorded right after its last request.
func TestAccessLogHasEveryDeliveredAnswer(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const host = "www.gd.gov.test"
	const page = "http://" + host + "/zwgk/wjk/"
	// A slow fault faster than the page is long: one flushed write, no
	// pause, so the client holds the answer while the handler still runs.
	if err := w.SetFault(host, Fault{Kind: FaultSlow, BytesPerSec: 10 << 20, PathPrefix: "/zwgk/"}); err != nil {
		t.Fatal(err)
	}
	const rounds = 300
	for i := range rounds {
		u := page
		if i%2 == 1 {
			u = "http://" + host + "/robots.txt" // an ordinary answer, not flushed
		}
		if r := get(t, c, "GET", u); r.status != 200 || len(r.body) == 0 {
			t.Fatalf("GET %s: status %d, %d bytes", u, r.status, len(r.body))
		}
		if n := len(w.AccessLog(host)); n != i+1 {
			t.Fatalf("after %d answers read in full, the log has %d entries", i+1, n)
		}
	}
	if n := len(w.AllAccess()); n != rounds {
		t.Errorf("AllAccess has %d entries, want %d", n, rounds)
	}
}
