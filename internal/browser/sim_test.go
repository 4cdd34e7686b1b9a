package browser

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/sim"
)

// TestRenderSimCityPortal renders the simulated city portal's gkmlpt index,
// which sits behind the real 412 cookie challenge of internal/sim, and
// checks the visit from the simulation's own access log.
func TestRenderSimCityPortal(t *testing.T) {
	needChromium(t)
	const host = "www.qingyuan.gov.test"
	w, err := sim.Start(t.Context(), sim.Options{})
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	defer w.Close()
	b, err := New(context.Background(), Options{
		UAToken: testUAToken,
		Resolve: w.ResolveMap(),
		Timeout: 45 * time.Second,
		Logger:  testLogger(),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer b.Close()

	pageURL := "http://" + host + "/qyfgw/gkmlpt/index"
	p, err := b.Render(t.Context(), pageURL, RenderOptions{
		WaitChallenge:    true,
		MaxWait:          20 * time.Second,
		ChallengeMarkers: []string{sim.ChallengeMarker},
	})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if p.Status != http.StatusOK || !p.Challenged {
		t.Errorf("status %d challenged %v, want 200 after a challenge", p.Status, p.Challenged)
	}
	if !strings.Contains(p.HTML, "_CONFIG") || strings.Contains(p.HTML, sim.ChallengeMarker) {
		t.Errorf("HTML is not the gkmlpt index:\n%.600s", p.HTML)
	}
	var clearance *http.Cookie
	for _, c := range p.Cookies {
		if c.Name == sim.ClearanceCookie && c.Host == host && c.Source == "browser" {
			clearance = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if clearance == nil {
		t.Fatalf("no %s cookie harvested: %+v", sim.ClearanceCookie, p.Cookies)
	}

	log := w.AccessLog(host)
	if len(log) == 0 || log[0].Status != http.StatusPreconditionFailed {
		t.Fatalf("sim access log %+v, want the visit to start with a 412", log)
	}
	var got, want []string
	for _, a := range log {
		if !strings.HasSuffix(a.UserAgent, " "+testUAToken) {
			t.Errorf("sim saw UA %q on %s", a.UserAgent, a.Path)
		}
		if a.InFlightAtArrival != 0 {
			t.Errorf("%s arrived with %d other requests in flight at %s", a.Path, a.InFlightAtArrival, host)
		}
		want = append(want, a.Path)
	}
	for _, r := range p.Requests {
		if r.BlockedReason == "" && r.Status != 0 {
			if u, err := url.Parse(r.URL); err == nil && u.Host == host {
				got = append(got, u.RequestURI())
			}
		}
	}
	// The same requests, in any order: scripts and styles wait for the
	// host's slot in whatever order the gate wakes them.
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Requests %v differ from the sim's access log %v", got, want)
	}

	t.Run("direct request reuses the harvested cookie", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+w.ResolveMap()[host]+"/qyfgw/gkmlpt/index", nil)
		req.Host = host
		req.Header.Set("User-Agent", testUAToken)
		req.AddCookie(clearance)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("direct request with the cookie: status %d, want 200", resp.StatusCode)
		}
	})
}
