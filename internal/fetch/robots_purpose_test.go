package fetch

import (
	"context"
	"strings"
	"testing"

	"zhizhi/internal/model"
)

// TestRobotsPurposeIsNoPass: a request that calls itself a robots.txt fetch
// but asks for another URL is judged by robots.txt like any other: the
// site never sees it. Only /robots.txt itself is fetched without the rules.
func TestRobotsPurposeIsNoPass(t *testing.T) {
	const gd = "www.gd.gov.test"
	// The simulated province site disallows /zwgk/rsrm/ for every agent.
	disallowed := "http://" + gd + "/zwgk/rsrm/x.html"
	for _, u := range []string{disallowed, "http://" + gd + "/zwgk/rsrm/robots.txt", "http://" + gd + "/zwgk/rsrm/x.html?/robots.txt"} {
		t.Run(u, func(t *testing.T) {
			e := newSimEnv(t, 1, ClientOptions{})
			e.advancing(t, true)
			_, err := e.c.Do(context.Background(), Request{URL: u, Purpose: model.PurposeRobots})
			if !IsRobotsDisallowed(err) {
				t.Fatalf("purpose robots, %s: err %v, want blocked by robots.txt", u, err)
			}
			for _, a := range e.w.AccessLog(gd) {
				if strings.HasPrefix(a.Path, "/zwgk/rsrm/") {
					t.Errorf("the site saw %s %s, which its robots.txt disallows", a.Method, a.Path)
				}
			}
		})
	}
	t.Run("robots.txt itself", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		e.advancing(t, true)
		r, err := e.c.Do(context.Background(), Request{URL: "http://" + gd + "/robots.txt", Purpose: model.PurposeRobots})
		if err != nil || r.Status != 200 || !strings.Contains(string(r.Body), "Disallow: /zwgk/rsrm/") {
			t.Fatalf("robots.txt: %v, %+v", err, r)
		}
	})
}
