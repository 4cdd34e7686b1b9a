package onboard

import (
	"context"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard/onboardtest"
)

// TestWizardCityPortal: the city portal, a gkmlpt site behind a cookie
// challenge, pasted as if nobody had configured it. Without a browser
// the wizard says the site needs one (not a bare HTTP 412); with
// Chromium it detects gkmlpt through the challenge, scans the four dept
// sub-sites, suggests 发改局 and 教育局 by name and the government's own
// catalogue as city_level, and drafts the site with the browser strategy.
func TestWizardCityPortal(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the simulated city portal at the default polite pace")
	}
	ctx := context.Background()
	sw := newSimWizard(t)
	// The live configuration without the city portal: a new site.
	b := *sw.wizard.Bundle
	b.Sites = nil
	for _, s := range sw.wizard.Bundle.Sites {
		if s.SiteCode != "qingyuan" {
			b.Sites = append(b.Sites, s)
		}
	}
	lines, _ := ParseBaseURLs("http://" + crawltest.CityPortalHost)

	noBrowser := &Wizard{Fetch: sw.wizard.Fetch, Bundle: &b}
	d := noBrowser.Detect(ctx, lines)[0]
	if d.Matched() || !strings.Contains(d.Problem, "Chromium") {
		t.Errorf("without a browser: detection %+v, want a problem saying the site needs Chromium", d)
	}
	if !crawltest.Chromium(t) {
		return
	}

	c := onboardtest.Client(t, sw.store, sw.Sim.ResolveString(), fetch.Chromium("", nil))
	w := &Wizard{Fetch: c, Bundle: &b}
	ds := w.Detect(ctx, lines)
	if !ds[0].Matched() || ds[0].AdapterID != "gkmlpt" || !ds[0].Browser {
		t.Fatalf("with a browser: detection %+v, want gkmlpt through the browser", ds[0])
	}
	sites := w.Scan(ctx, ds)
	if len(sites) != 1 || sites[0].Problem != "" {
		t.Fatalf("scan: %+v", sites)
	}
	s := &sites[0]
	sw.dir.SuggestAll(sites)
	want := map[string]struct {
		name    string
		binding string
		dept    int64
	}{
		"qyfgw": {"清远市发展和改革局", model.BindingMapped, 37},
		"qyjyj": {"清远市教育局", model.BindingMapped, 41},
		"xxgk":  {"清远市人民政府", model.BindingCityLevel, 0},
		"tjgb":  {"清远市统计局", "", 0},
	}
	if len(s.Depts) != len(want) {
		t.Errorf("depts %+v, want %d", s.Depts, len(want))
	}
	for _, d := range s.Depts {
		wd, ok := want[d.DeptPath]
		switch {
		case !ok:
			t.Errorf("unexpected dept %s", d.DeptPath)
		case d.DisplayName != wd.name || d.Problem != "" || d.ColumnCount == 0:
			t.Errorf("%s: %q, %d columns, problem %q; want %q with columns", d.DeptPath, d.DisplayName, d.ColumnCount, d.Problem, wd.name)
		case wd.binding != "" && (d.Binding != wd.binding || wd.dept != 0 && (d.LocalDeptID == nil || *d.LocalDeptID != wd.dept)):
			t.Errorf("%s: suggested %s %v (%s), want %s %d", d.DeptPath, d.Binding, deref(d.LocalDeptID), d.Suggested.Reason, wd.binding, wd.dept)
		}
	}
	// The statistics catalogue spans departments: the person says so.
	for i := range s.Depts {
		if s.Depts[i].DeptPath == "tjgb" {
			s.Depts[i].Binding, s.Depts[i].LocalDeptID = model.BindingCrossDept, nil
		}
	}
	s.SiteCode, s.SiteRole = "qingyuan_new", model.RoleQingyuanLocal
	drafts, ps := w.Drafts(sites, sw.dir)
	if len(ps) > 0 {
		t.Fatalf("drafts refused: %v", ps)
	}
	cfg := t.TempDir()
	onboardtest.CopyFile(t, bundledConfig+"/cms/gkmlpt.yaml", cfg+"/cms/gkmlpt.yaml")
	onboardtest.CopyFile(t, bundledConfig+"/"+config.DepartmentsFile, cfg+"/"+config.DepartmentsFile)
	onboardtest.WriteFile(t, cfg+"/"+drafts[0].Name, drafts[0].YAML)
	loaded, problems := config.Load(cfg)
	if config.HasErrors(problems) {
		t.Fatalf("the draft does not load: %v\n%s", config.Errors(problems), drafts[0].YAML)
	}
	if got := loaded.Sites[0]; got.FetchStrategy != config.FetchBrowser || got.SiteRole != model.RoleQingyuanLocal || got.AdapterParams["sid"] != "755010" {
		t.Errorf("draft site: strategy %q role %q sid %v; want browser, qingyuan_local, 755010", got.FetchStrategy, got.SiteRole, got.AdapterParams["sid"])
	}
}
