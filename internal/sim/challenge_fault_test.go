package sim

import (
	"bytes"
	"net/http"
	"testing"
)

// TestChallengeFault: the challenge fault answers the script page with 412
// even to a request holding a valid clearance, spares robots.txt, and the
// portal opens again once the fault is cleared.
func TestChallengeFault(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const (
		host  = "www.qingyuan.gov.test"
		index = "http://www.qingyuan.gov.test/qyfgw/gkmlpt/index"
	)
	ck := w.Clearance()
	cookie := ck.Name + "=" + ck.Value
	if err := w.SetFault(host, Fault{Kind: FaultChallenge}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		url    string
		cookie string
		want   int
		shield bool
	}{
		{"valid clearance still challenged", index, cookie, http.StatusPreconditionFailed, true},
		{"no cookie challenged", index, "", http.StatusPreconditionFailed, true},
		{"robots.txt spared", "http://" + host + "/robots.txt", "", http.StatusOK, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r response
			if tt.cookie == "" {
				r = get(t, c, "GET", tt.url)
			} else {
				r = get(t, c, "GET", tt.url, "Cookie", tt.cookie)
			}
			shield := bytes.Contains(r.body, []byte(ChallengeMarker))
			if r.status != tt.want || shield != tt.shield {
				t.Errorf("status %d, challenge page %v; want %d, %v", r.status, shield, tt.want, tt.shield)
			}
			if bytes.Contains(r.body, []byte(CaptchaMarker)) {
				t.Error("the challenge fault looks like a CAPTCHA")
			}
		})
	}
	log := w.AccessLog(host)
	if first := log[0]; first.Fault != FaultChallenge || !first.Cleared {
		t.Errorf("access log: fault %q cleared %v, want the fault over a valid clearance", first.Fault, first.Cleared)
	}
	w.ClearFaults(host)
	if r := get(t, c, "GET", index, "Cookie", cookie); r.status != http.StatusOK {
		t.Errorf("after ClearFaults: status %d, want 200", r.status)
	}
}
