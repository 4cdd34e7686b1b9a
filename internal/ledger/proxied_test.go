package ledger

import (
	"net/http/httptest"
	"testing"
)

// TestProxiedAddress: behind a reverse proxy every request comes from the
// proxy, so visitors are told apart by the header it adds — trusted only
// from the proxy itself (loopback or private network), never from a
// client on the internet, who could write any header.
func TestProxiedAddress(t *testing.T) {
	addr := ProxiedAddress("X-Forwarded-For")
	for _, tc := range []struct {
		peer, header, want string
	}{
		{"127.0.0.1:5000", "203.0.113.7", "203.0.113.7"},
		{"10.0.0.2:5000", "198.51.100.1, 203.0.113.7", "203.0.113.7"}, // the proxy appended the last one
		{"[::1]:5000", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::"},      // an IPv6 reader by its /64
		{"203.0.113.9:5000", "198.51.100.1", "203.0.113.9"},           // not from a proxy: the header is ignored
		{"127.0.0.1:5000", "", "127.0.0.1"},
		{"127.0.0.1:5000", "not-an-address", "127.0.0.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		if tc.header != "" {
			r.Header.Set("X-Forwarded-For", tc.header)
		}
		if got := addr(r); got != tc.want {
			t.Errorf("peer %s, header %q: visitor address %q, want %q", tc.peer, tc.header, got, tc.want)
		}
	}
}
