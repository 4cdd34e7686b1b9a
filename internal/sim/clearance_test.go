package sim

import (
	"net/http"
	"testing"
	"time"
)

// TestClearanceHelper: the cookie Clearance hands out opens the city portal
// exactly like one earned by running the challenge script, and expires on
// the sim clock like one.
func TestClearanceHelper(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const index = "http://www.qingyuan.gov.test/qyfgw/gkmlpt/index"
	ck := w.Clearance()
	if ck.Name != ClearanceCookie || ck.Path != "/" {
		t.Fatalf("cookie = %+v", ck)
	}
	header := ck.Name + "=" + ck.Value
	tests := []struct {
		name    string
		advance time.Duration
		cookie  string
		want    int
	}{
		{"fresh cookie", 0, header, http.StatusOK},
		{"no cookie", 0, "", http.StatusPreconditionFailed},
		{"value tampered", 0, header + "0", http.StatusPreconditionFailed},
		{"just before the TTL", 29 * time.Minute, header, http.StatusOK},
		{"after the TTL", 2 * time.Minute, header, http.StatusPreconditionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.Advance(tt.advance)
			var r response
			if tt.cookie == "" {
				r = get(t, c, "GET", index)
			} else {
				r = get(t, c, "GET", index, "Cookie", tt.cookie)
			}
			if r.status != tt.want {
				t.Errorf("status = %d, want %d", r.status, tt.want)
			}
		})
	}
	// A new cookie after expiry is valid again: it is minted on the sim clock.
	again := w.Clearance()
	if r := get(t, c, "GET", index, "Cookie", again.Name+"="+again.Value); r.status != http.StatusOK {
		t.Errorf("cookie minted after advancing: status %d", r.status)
	}
}
