package fetch

import (
	"context"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestSiteIntervalFromConfig: a site's own rate.interval_sec (stored on its
// targets) spaces requests to its host when it is stricter than the default
// 2 s, as the site sees it.
func TestSiteIntervalFromConfig(t *testing.T) {
	e := newSimEnv(t, 1, ClientOptions{})
	ctx := context.Background()
	var siteID int64
	err := e.st.WithTx(ctx, func(tx *store.Tx) error {
		site := &model.Site{SiteCode: "qingcheng", SiteName: "清城", BaseURL: "http://" + qingcheng,
			SiteRole: model.RoleCountyLocal, YAMLPath: "config/sites/qingcheng.yaml", Access: model.AccessFull,
			DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
		id, _, err := tx.UpsertSite(ctx, site)
		if err != nil {
			return err
		}
		siteID = id
		_, _, err = tx.UpsertTarget(ctx, &model.Target{SiteID: id, TargetCode: "qc_slow", TargetName: "慢",
			EntryURL: "http://" + qingcheng + "/", IntervalSec: 10, ExpectedCadenceDays: 7, Enabled: true, Source: model.SourceYAML})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.LoadSitePolicies(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if p := e.c.policy(qingcheng); p.Interval != 10*time.Second || p.SiteID != siteID {
		t.Fatalf("policy %+v, want interval 10s", p)
	}
	e.advancing(t, true)
	u := truthURL(t, e.w, qingcheng, "/")
	e.w.ResetLog()
	for range 4 {
		mustDo(t, e.c, Request{URL: u, Purpose: model.PurposeDetail})
	}
	var times []time.Time
	for _, a := range e.w.AccessLog(qingcheng) {
		if a.Path != "/robots.txt" {
			times = append(times, a.Arrived)
		}
	}
	if len(times) != 4 {
		t.Fatalf("the site saw %d requests, want 4", len(times))
	}
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < 10*time.Second {
			t.Errorf("requests %d and %d were %v apart at the site, want ≥ 10s (rate.interval_sec)", i-1, i, d)
		}
	}
}
