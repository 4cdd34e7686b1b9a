package sim

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

// startWorld starts a world and closes it when the test ends.
func startWorld(t *testing.T, opts Options) *World {
	t.Helper()
	w, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start world: %v", err)
	}
	t.Cleanup(w.Close)
	return w
}

// client is the world's loopback-only test client.
func client(w *World) *http.Client { return w.HTTPClient() }

type response struct {
	status int
	header http.Header
	body   []byte
}

// get fetches u with optional headers (pairs).
func get(t *testing.T, c *http.Client, method, u string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatalf("new request %s: %v", u, err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", u, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

var challengeVars = regexp.MustCompile(`var n = "([0-9a-f]+)", e = "([0-9]+)", k = "([0-9a-f]+)"`)

// solveChallenge does what the challenge page's script does in a browser and
// returns the cookie header it would set.
func solveChallenge(t *testing.T, page []byte) string {
	t.Helper()
	m := challengeVars.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no challenge variables in page:\n%s", page)
	}
	n, e, k := string(m[1]), string(m[2]), string(m[3])
	return ClearanceCookie + "=" + n + "." + e + "." + challengeProof(n, e, k)
}

// clearance gets a clearance cookie for the city portal.
func clearance(t *testing.T, w *World, c *http.Client) string {
	t.Helper()
	r := get(t, c, "GET", "http://www.qingyuan.gov.test/qyfgw/gkmlpt/index")
	if r.status != http.StatusPreconditionFailed {
		t.Fatalf("first visit status = %d, want 412", r.status)
	}
	return solveChallenge(t, r.body)
}

// fetchAs fetches u with the clearance cookie when u is on the city portal.
func fetchAs(t *testing.T, c *http.Client, cookie, u string, headers ...string) response {
	t.Helper()
	pu, _ := url.Parse(u)
	if pu.Host == "www.qingyuan.gov.test" {
		headers = append(headers, "Cookie", cookie)
	}
	return get(t, c, "GET", u, headers...)
}
