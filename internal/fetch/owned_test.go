package fetch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestOwnedOnlyOnLoopback: owned (a looser limiter, robots.txt optional)
// is believed only for a host the resolve map pins to loopback. For any
// other host, whatever the database or the caller says, the site sees the
// default rules: the page its robots.txt disallows is never asked for, and
// its requests keep to burst 3 and one per 2 s.
func TestOwnedOnlyOnLoopback(t *testing.T) {
	ctx := context.Background()
	t.Run("robots.txt, owned in the database", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		o := newOutsideSite(t)
		o.robots = "User-agent: *\nDisallow: /private/\n"
		c := o.client(t, e)
		err := e.st.WithTx(ctx, func(tx *store.Tx) error {
			_, _, err := tx.UpsertSite(ctx, &model.Site{SiteCode: "outside", SiteName: "外站", BaseURL: "http://" + outsideHost,
				SiteRole: model.RoleCountyLocal, YAMLPath: "config/sites/outside.yaml", Access: model.AccessFull,
				DefaultFetchStrategy: model.StrategyDirect, RespectRobots: false, Owned: true, Enabled: true})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.LoadSitePolicies(ctx, nil); err != nil {
			t.Fatal(err)
		}
		e.advancing(t, true)
		if _, err := c.Do(ctx, Request{URL: "http://" + outsideHost + "/private/x.html", Purpose: model.PurposeDetail}); !IsRobotsDisallowed(err) {
			t.Errorf("disallowed page of an 'owned' host outside the map: %v, want blocked by robots.txt", err)
		}
		for _, a := range o.seen() {
			if strings.HasPrefix(a.path, "/private/") {
				t.Errorf("the site saw %s, which its robots.txt disallows", a.path)
			}
		}
	})
	t.Run("limiter, owned by the caller", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		o := newOutsideSite(t)
		o.now = e.clock.Now
		c := o.client(t, e)
		c.SetSitePolicy(outsideHost, SitePolicy{RespectRobots: true, Owned: true, Interval: time.Millisecond, Burst: 1000})
		e.advancing(t, true)
		for i := range 5 {
			if _, err := c.Do(ctx, Request{URL: fmt.Sprintf("http://%s/p%d.html", outsideHost, i), Purpose: model.PurposeDetail}); err != nil {
				t.Fatal(err)
			}
		}
		seen := o.seen()
		if len(seen) != 6 {
			t.Fatalf("the site saw %d requests (robots.txt and 5 pages), want 6", len(seen))
		}
		// Burst 3, then one request per 2 s: request k (from 0) comes no
		// sooner than 2·(k−2) s after the first.
		for k := 3; k < len(seen); k++ {
			if d, least := seen[k].at.Sub(seen[0].at), time.Duration(k-2)*2*time.Second; d < least {
				t.Errorf("request %d (%s) came %v after the first, want ≥ %v", k, seen[k].path, d, least)
			}
		}
	})
	t.Run("pinned to loopback", func(t *testing.T) {
		e := newSimEnv(t, 1, ClientOptions{})
		e.c.SetSitePolicy(yingde, SitePolicy{RespectRobots: true, Owned: true, Interval: time.Millisecond, Burst: 1000})
		if p := e.c.policy(yingde); !p.Owned || p.Burst != 1000 {
			t.Errorf("policy of a host pinned to loopback: %+v, want owned", p)
		}
	})
}
