package onboard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard/onboardtest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// deadHost is a host the resolve map sends to a closed loopback port.
const deadHost = "dead.gov.test"

// simWizard is the simulated counties, a store holding the bundled and
// the counties' departments, and a wizard over the bundled configuration
// with a polite client at the default pace.
type simWizard struct {
	*onboardtest.Counties
	store  *store.Store
	wizard *Wizard
	dir    *Directory
}

func newSimWizard(t *testing.T) *simWizard {
	t.Helper()
	ctx := context.Background()
	cs := onboardtest.StartCounties(t, bundledConfig)
	b, problems := config.Load(bundledConfig)
	if config.HasErrors(problems) {
		t.Fatalf("bundled config: %v", config.Errors(problems))
	}
	st := storetest.SQLite(t)
	onboardtest.ImportDepartments(t, st, filepath.Join(bundledConfig, config.DepartmentsFile))
	onboardtest.ImportDepartments(t, st, filepath.Join(cs.Dir, config.DepartmentsFile))
	depts, err := st.ListDepartments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := onboardtest.Client(t, st, cs.Sim.ResolveString()+","+deadHost+"="+onboardtest.ClosedAddr(t), nil)
	return &simWizard{Counties: cs, store: st, wizard: &Wizard{Fetch: c, Bundle: b}, dir: NewDirectory(depts)}
}

// TestWizardOnSimulatedWeb runs the four steps on the simulated web as the
// console would: a paste with a bad line, two gkmlpt counties, a template
// county, an onboarded site and a host that does not answer; detection
// finds gkmlpt where it runs and nothing on the template site; the scan
// finds the dept paths and names the sim's own configuration has; the
// suggestions map every dept to the department the sim binds it to; a
// pending row is refused by name; the drafts load through the real
// configuration loader with the bindings chosen; and all of it through
// the polite fetcher, with nothing written to the configuration or to the
// configuration tables.
func TestWizardOnSimulatedWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("reads four simulated county sites at the default polite pace")
	}
	ctx := context.Background()
	sw := newSimWizard(t)
	liveBefore := onboardtest.TreeSum(t, bundledConfig)

	// Step 1: paste and detect.
	paste := strings.Join([]string{
		"http://c001.county.gov.test",
		"http://c002.county.gov.test",
		"",
		"http://C001.county.gov.test/",
		"ftp://c003.county.gov.test",
		"http://c003.county.gov.test",
		"http://" + deadHost,
		"http://www.qingcheng.gov.test",
	}, "\n")
	lines, bad := ParseBaseURLs(paste)
	if len(bad) != 1 || bad[0].Line != 5 {
		t.Fatalf("refused lines %v, want line 5 (ftp) alone", bad)
	}
	ds := sw.wizard.Detect(ctx, lines)
	byHost := map[string]Detection{}
	for _, d := range ds {
		byHost[hostOf(d.BaseURL)] = d
	}
	if len(ds) != 5 {
		t.Fatalf("%d detections, want 5: %+v", len(ds), ds)
	}
	for _, host := range []string{"c001.county.gov.test", "c003.county.gov.test"} {
		d := byHost[host]
		if !d.Matched() || d.AdapterID != "gkmlpt" || d.Evidence == "" || d.ConfiguredAs != "" {
			t.Errorf("%s: detection %+v, want gkmlpt matched with its evidence", host, d)
		}
	}
	if d := byHost["c002.county.gov.test"]; d.Matched() || d.Problem != "" || d.SiteName == "" {
		t.Errorf("template county: detection %+v, want read but not matched", d)
	}
	if d := byHost[deadHost]; d.Problem == "" || d.Matched() {
		t.Errorf("dead host: detection %+v, want a problem in words", d)
	} else {
		t.Logf("dead host: %s", d.Problem)
	}
	if d := byHost["www.qingcheng.gov.test"]; d.AdapterID != "gkmlpt" || d.ConfiguredAs != "qingcheng" {
		t.Errorf("qingcheng: detection %+v, want gkmlpt, configured as qingcheng", d)
	}

	// Step 2: scan the dept paths of the matched sites.
	sites := sw.wizard.Scan(ctx, ds)
	if len(sites) != 3 {
		t.Fatalf("%d scanned sites, want the 3 matched: %+v", len(sites), sites)
	}
	for _, s := range sites[:2] {
		truth := sw.Site(t, hostOf(s.BaseURL))
		if s.Problem != "" {
			t.Fatalf("%s: scan problem %s", s.BaseURL, s.Problem)
		}
		if s.SiteCode != truth.SiteCode || s.SiteName != truth.SiteName {
			t.Errorf("%s: site %s %q, want %s %q", s.BaseURL, s.SiteCode, s.SiteName, truth.SiteCode, truth.SiteName)
		}
		if want := fmt.Sprint(truth.AdapterParams["sid"]); s.Params["sid"] != want {
			t.Errorf("%s: sid %q, want %q", s.BaseURL, s.Params["sid"], want)
		}
		var got, want []string
		for _, d := range s.Depts {
			got = append(got, d.DeptPath+" "+d.DisplayName)
		}
		for _, d := range truth.Depts {
			want = append(want, d.DeptPath+" "+d.DeptDisplayName)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: depts %q, want %q", s.BaseURL, got, want)
			continue
		}
		for i, d := range s.Depts {
			if d.Problem != "" {
				t.Errorf("%s/%s: %s", s.BaseURL, d.DeptPath, d.Problem)
			}
			ids := map[string]bool{}
			for _, c := range d.Columns {
				ids[c.ID] = true
			}
			for _, c := range truth.Depts[i].Columns {
				if !ids[c.ColumnID] {
					t.Errorf("%s/%s: column %s %s not found", s.BaseURL, d.DeptPath, c.ColumnID, c.Name)
				}
			}
			if d.ColumnCount != len(d.Columns) || d.ColumnCount < len(truth.Depts[i].Columns) {
				t.Errorf("%s/%s: %d columns estimated, %d listed; the site has at least %d", s.BaseURL, d.DeptPath, d.ColumnCount, len(d.Columns), len(truth.Depts[i].Columns))
			}
		}
	}

	// Step 3: suggestions map each county dept to its department.
	sw.dir.SuggestAll(sites)
	for _, s := range sites[:2] {
		truth := sw.Site(t, hostOf(s.BaseURL))
		for i, d := range s.Depts {
			want := truth.Depts[i].LocalDeptID
			if d.Binding != model.BindingMapped || d.LocalDeptID == nil || *d.LocalDeptID != *want {
				t.Errorf("%s/%s %s: suggested %s %v (%s), want mapped %d", s.SiteCode, d.DeptPath, d.DisplayName, d.Binding, d.LocalDeptID, d.Suggested.Reason, *want)
			}
		}
	}
	// The onboarded site is refused; the person leaves it out.
	if ps := sw.wizard.Check(sites[2:], sw.dir); len(ps) != 1 || !strings.Contains(ps[0].Problem, "qingcheng") {
		t.Errorf("onboarded qingcheng: problems %v, want it refused by name", ps)
	}
	sites = sites[:2]
	// A row left pending stops the wizard, which names it.
	row := &sites[1].Depts[len(sites[1].Depts)-1]
	keep := *row
	row.Binding, row.LocalDeptID = model.BindingPending, nil
	if drafts, ps := sw.wizard.Drafts(sites, sw.dir); len(drafts) != 0 || len(ps) != 1 || ps[0].DeptPath != row.DeptPath || ps[0].SiteCode != sites[1].SiteCode {
		t.Errorf("a pending row: drafts %d, problems %v; want none and the row %s/%s named", len(drafts), ps, sites[1].SiteCode, row.DeptPath)
	}
	*row = keep
	// The person's choices: one dept is cross-department, one a reference.
	sites[0].Depts[0].Binding, sites[0].Depts[0].LocalDeptID = model.BindingCrossDept, nil
	sites[1].Depts[0].Binding, sites[1].Depts[0].LocalDeptID = model.BindingExternalRef, nil

	// Step 4: drafts, loaded by the real loader beside the adapter they use.
	drafts, ps := sw.wizard.Drafts(sites, sw.dir)
	if len(ps) > 0 {
		t.Fatalf("drafts refused: %v", ps)
	}
	t.Logf("draft %s:\n%s", drafts[0].Name, drafts[0].YAML)
	cfg := t.TempDir()
	onboardtest.CopyFile(t, filepath.Join(bundledConfig, config.CMSDir, "gkmlpt.yaml"), filepath.Join(cfg, config.CMSDir, "gkmlpt.yaml"))
	onboardtest.CopyFile(t, filepath.Join(bundledConfig, config.TopicsFile), filepath.Join(cfg, config.TopicsFile))
	onboardtest.CopyFile(t, filepath.Join(sw.Dir, config.DepartmentsFile), filepath.Join(cfg, config.DepartmentsFile))
	for _, d := range drafts {
		onboardtest.WriteFile(t, filepath.Join(cfg, filepath.FromSlash(d.Name)), d.YAML)
	}
	loaded, problems := config.Load(cfg)
	if config.HasErrors(problems) {
		t.Fatalf("the drafts do not load: %v\n%s", config.Errors(problems), drafts[0].YAML)
	}
	for _, p := range problems {
		t.Logf("draft note: %s", p)
	}
	if len(loaded.Sites) != len(sites) {
		t.Fatalf("%d sites loaded, want %d", len(loaded.Sites), len(sites))
	}
	for _, s := range sites {
		var got *config.SiteFile
		for _, l := range loaded.Sites {
			if l.SiteCode == s.SiteCode {
				got = l
			}
		}
		if got == nil || got.BaseURL != s.BaseURL || got.CMSAdapter != "gkmlpt" || fmt.Sprint(got.AdapterParams["sid"]) != s.Params["sid"] {
			t.Errorf("site %s does not round-trip: %+v", s.SiteCode, got)
			continue
		}
		if len(got.Depts) != len(s.Depts) {
			t.Errorf("site %s: %d depts loaded, want %d", s.SiteCode, len(got.Depts), len(s.Depts))
			continue
		}
		for i, d := range s.Depts {
			g := got.Depts[i]
			if g.DeptPath != d.DeptPath || g.DeptBinding != d.Binding || fmt.Sprint(deref(g.LocalDeptID)) != fmt.Sprint(deref(d.LocalDeptID)) || g.DeptDisplayName != d.DisplayName {
				t.Errorf("%s/%s loads as %s %s %v %q, want %s %v %q", s.SiteCode, d.DeptPath, g.DeptPath, g.DeptBinding, deref(g.LocalDeptID), g.DeptDisplayName, d.Binding, deref(d.LocalDeptID), d.DisplayName)
			}
			if len(g.Columns) != len(d.Columns) {
				t.Errorf("%s/%s: %d columns loaded, want %d", s.SiteCode, d.DeptPath, len(g.Columns), len(d.Columns))
			}
			for _, c := range g.Columns {
				if c.Enabled {
					t.Errorf("%s/%s column %s is subscribed in the draft; subscribing is a later step", s.SiteCode, d.DeptPath, c.ColumnID)
				}
			}
		}
	}

	// The zip holds every draft as sites/<code>.yaml, byte for byte.
	z, err := Zip(drafts, time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	inZip := map[string]string{}
	for _, f := range onboardtest.Unzip(t, z) {
		inZip[f.Name] = f.Body
	}
	for _, d := range drafts {
		if inZip[d.Name] != d.YAML {
			t.Errorf("zip entry %s differs from the draft", d.Name)
		}
	}
	if len(inZip) != len(drafts) {
		t.Errorf("zip has %d entries, want %d", len(inZip), len(drafts))
	}

	// Nothing written: the live configuration is as it was, and no site,
	// dept or target row exists.
	if onboardtest.TreeSum(t, bundledConfig) != liveBefore {
		t.Errorf("the live configuration directory changed")
	}
	if got, err := sw.store.ListSites(ctx); err != nil || len(got) != 0 {
		t.Errorf("crawl_site rows after the wizard: %d (%v), want none", len(got), err)
	}
	if got, err := sw.store.ListTargets(ctx, store.TargetFilter{}); err != nil || len(got) != 0 {
		t.Errorf("crawl_target rows after the wizard: %d (%v), want none", len(got), err)
	}

	// Politely: on every county host robots.txt came first, every request
	// carried zhizhi's name, none overlapped another at the host, and each
	// is in crawl_log.
	for _, host := range sw.Sim.CountyHosts() {
		log := sw.Sim.AccessLog(host)
		if len(log) == 0 {
			if host != "c004.county.gov.test" {
				t.Errorf("%s: no requests", host)
			}
			continue
		}
		if log[0].Path != "/robots.txt" {
			t.Errorf("%s: first request %s, want /robots.txt", host, log[0].Path)
		}
		for _, a := range log {
			if a.UserAgent != sw.wizard.Fetch.UserAgent() {
				t.Errorf("%s %s: user agent %q, want zhizhi's", host, a.Path, a.UserAgent)
			}
			if a.InFlightAtArrival != 0 {
				t.Errorf("%s %s arrived while %d others were in flight", host, a.Path, a.InFlightAtArrival)
			}
		}
		rows, err := sw.store.ListCrawlLogs(ctx, store.CrawlLogFilter{Host: host, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(log) {
			t.Errorf("%s: %d requests seen by the site, %d in crawl_log", host, len(log), len(rows))
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
