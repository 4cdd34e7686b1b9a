package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// The simulated Lianzhou site: a template site whose notices column lists
// articles at /tzgg/ (config/sites/lianzhou.yaml).
const (
	lianzhouList    = "http://www.lianzhou.gov.test/tzgg/"
	lianzhouArticle = "http://www.lianzhou.gov.test/tzgg/202411/t20241111_510001.html"
)

type savedAnswer struct {
	Target   targetView  `json:"target"`
	Saved    bool        `json:"saved"`
	DryRun   *dryRunView `json:"dry_run"`
	Warnings []string    `json:"warnings"`
	Changed  []string    `json:"changed"`
}

type previewAnswer struct {
	Target   targetDraftView `json:"target"`
	DryRun   *dryRunView     `json:"dry_run"`
	Warnings []string        `json:"warnings"`
	Changed  []string        `json:"changed"`
}

type refusalAnswer struct {
	Error  string         `json:"error"`
	Detail string         `json:"detail"`
	Fields []fieldProblem `json:"fields"`
	DryRun *dryRunView    `json:"dry_run"`
}

func failedCheck(d *dryRunView, name string) bool {
	return d != nil && slices.ContainsFunc(d.Checks, func(c checkView) bool { return c.Name == name && !c.OK })
}

func targetAudits(t *testing.T, st *store.Store, code string) []store.AuditEntry {
	t.Helper()
	var out []store.AuditEntry
	for _, e := range audits(t, st, "target") {
		if e.ObjectID == code {
			out = append(out, e)
		}
	}
	return out
}

func provenanceOf(t *testing.T, a *apiTest, id int64) map[string]fieldSourceView {
	t.Helper()
	var l list[fieldSourceView]
	a.expect(get(idPath("/api/v1/targets/%d/provenance", id), tokViewer), 200).decode(t, &l)
	out := map[string]fieldSourceView{}
	for _, f := range l.Items {
		out[f.Field] = f
	}
	return out
}

// TestTargetDryRunGate: with the real crawler against the simulated web, a
// target whose sample article the template cannot read is refused with 422
// and the dry-run in the body, and nothing is written; fixed, it passes and
// is saved, recorded with the API caller as the actor. A change to a YAML
// target goes through the same gate and becomes an override.
func TestTargetDryRunGate(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		web := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: "../../demo/config", Sim: sim.Options{Seed: 1}})
		a := newAPITestWith(t, st, time.Now(), web.Crawler(nil).Validate, web.Crawler(nil).PreviewColumn)
		site, err := st.SiteByCode(ctx, "lianzhou")
		if err != nil {
			t.Fatal(err)
		}
		create := func(sample string) string {
			return fmt.Sprintf(`{"site_id": %d, "target_code": "lianzhou_tzgg_copy", "target_name": "连州市人民政府网｜通知公告（副本）",
				"entry_url": %q, "sample_article_url": %q, "dept_binding": "mapped", "local_dept_id": 2403,
				"channel_name": "通知公告", "expected_cadence_days": 3}`, site.ID, lianzhouList, sample)
		}

		// The preview shows the red dry-run and saves nothing.
		var pv previewAnswer
		a.expect(postJSON("/api/v1/targets/dry-run", tokKeyWrite, create(lianzhouList)), 200).decode(t, &pv)
		if pv.DryRun == nil || pv.DryRun.Green || !failedCheck(pv.DryRun, "标题非空") || pv.Target.ID != nil {
			t.Fatalf("preview of a list page as sample: %+v, want a red dry-run failing the title check and no id", pv)
		}

		// The list page is no article: refused with the dry-run's findings.
		var ref refusalAnswer
		a.expect(postJSON("/api/v1/targets", tokKeyWrite, create(lianzhouList)), http.StatusUnprocessableEntity).decode(t, &ref)
		if ref.Error != "dry_run_failed" || ref.DryRun == nil || ref.DryRun.Green || ref.DryRun.Validation == nil {
			t.Fatalf("refusal %+v, want dry_run_failed with the red dry-run and what it read", ref)
		}
		if !failedCheck(ref.DryRun, "标题非空") || !strings.Contains(ref.Detail, "标题非空") {
			t.Errorf("refusal names checks %+v / %q, want the title check among the failed ones", ref.DryRun.Checks, ref.Detail)
		}
		if ref.DryRun.Validation.ListItems == 0 {
			t.Errorf("the list page was read, yet the dry-run reports no list items")
		}
		if _, err := st.TargetByCode(ctx, "lianzhou_tzgg_copy"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a target refused by its dry-run was saved: %v", err)
		}
		if es := targetAudits(t, st, "lianzhou_tzgg_copy"); len(es) != 0 {
			t.Errorf("refused target has audit entries: %+v", es)
		}

		// Fixed: a real article of the column. Saved, green, by the key.
		var sv savedAnswer
		a.expect(postJSON("/api/v1/targets", tokKeyWrite, create(lianzhouArticle)), 201).decode(t, &sv)
		if !sv.Saved || sv.DryRun == nil || !sv.DryRun.Green || sv.DryRun.Validation == nil || sv.DryRun.Validation.Title == "" {
			t.Fatalf("create with a real sample: %+v, want saved after a green dry-run that found the title", sv)
		}
		if sv.Target.ID == 0 || sv.Target.Source != model.SourceAdmin || sv.Target.DeptID == nil || *sv.Target.DeptID != 2403 ||
			sv.Target.DeptBinding == nil || *sv.Target.DeptBinding != model.BindingMapped || !sv.Target.Enabled {
			t.Errorf("saved target %+v, want an enabled console target mapped to department 2403", sv.Target)
		}
		tg, err := st.TargetByCode(ctx, "lianzhou_tzgg_copy")
		if err != nil || tg.ID != sv.Target.ID || tg.CreatedBy != "apikey:8(li)" {
			t.Fatalf("stored target %+v %v, want id %d created by apikey:8(li)", tg, err, sv.Target.ID)
		}
		if es := targetAudits(t, st, "lianzhou_tzgg_copy"); len(es) != 1 || es[0].Action != "target.create" || es[0].Actor != "apikey:8(li)" {
			t.Errorf("audit %+v, want one target.create by apikey:8(li)", es)
		}
		if p := provenanceOf(t, a, tg.ID); p["sample_article_url"].Source != "console" || p["sample_article_url"].ChangedBy == nil ||
			*p["sample_article_url"].ChangedBy != "apikey:8(li)" {
			t.Errorf("provenance of a console target: %+v", p["sample_article_url"])
		}

		// The same code again: 409, naming the field.
		a.expect(postJSON("/api/v1/targets", tokOperator, create(lianzhouArticle)), http.StatusConflict).decode(t, &ref)
		if ref.Error != "conflict" || len(ref.Fields) != 1 || ref.Fields[0].Field != "target_code" {
			t.Errorf("taken code: %+v, want conflict on target_code", ref)
		}

		// A YAML target: a patch to a sample the template cannot read is
		// refused and changes nothing.
		yaml, err := st.TargetByCode(ctx, "lianzhou_tzgg")
		if err != nil {
			t.Fatal(err)
		}
		path := idPath("/api/v1/targets/%d", yaml.ID)
		bad := fmt.Sprintf(`{"sample_article_url": %q, "expected_cadence_days": 5}`, lianzhouList)
		a.expect(patchJSON(path, tokOperator, bad), http.StatusUnprocessableEntity).decode(t, &ref)
		if ref.DryRun == nil || ref.DryRun.Green {
			t.Fatalf("patch to a bad sample: %+v, want the red dry-run", ref)
		}
		if now, _ := st.TargetByID(ctx, yaml.ID); now.SampleArticleURL != yaml.SampleArticleURL || now.ExpectedCadenceDays != 3 {
			t.Errorf("refused patch changed the row: sample %q cadence %d", now.SampleArticleURL, now.ExpectedCadenceDays)
		}
		// Its preview shows the same and saves nothing either.
		a.expect(postJSON(path+"/dry-run", tokOperator, bad), 200).decode(t, &pv)
		if pv.DryRun == nil || pv.DryRun.Green || !slices.Contains(pv.Changed, "sample_article_url") {
			t.Errorf("preview of the bad patch: %+v", pv)
		}
		// The stored target's own dry-run is green.
		a.expect(postJSON(path+"/dry-run", tokOperator, ""), 200).decode(t, &pv)
		if pv.DryRun == nil || !pv.DryRun.Green || pv.Target.ID == nil || *pv.Target.ID != yaml.ID {
			t.Errorf("dry-run of the stored target: %+v, want green", pv)
		}

		// A good patch passes the gate and becomes an override.
		a.expect(patchJSON(path, tokOperator, `{"expected_cadence_days": 5}`), 200).decode(t, &sv)
		if !sv.Saved || sv.DryRun == nil || !sv.DryRun.Green || sv.Target.ExpectedCadenceDays != 5 ||
			!slices.Equal(sv.Changed, []string{"expected_cadence_days"}) {
			t.Fatalf("good patch: %+v", sv)
		}
		p := provenanceOf(t, a, yaml.ID)
		if f := p["expected_cadence_days"]; f.Source != "override" || f.Value != "5" || f.YAMLValue == nil || *f.YAMLValue != "3" ||
			f.ChangedBy == nil || *f.ChangedBy != "user:li" || f.ChangedAt == nil {
			t.Errorf("provenance of the changed field: %+v, want an override by user:li over the files' 3", f)
		}
		if f := p["target_name"]; f.Source != "yaml" || f.ChangedBy != nil {
			t.Errorf("provenance of an unchanged field: %+v, want yaml", f)
		}
		if es := targetAudits(t, st, "lianzhou_tzgg"); len(es) != 1 || es[0].Action != "target.update" || es[0].Actor != "user:li" {
			t.Errorf("audit %+v, want one target.update by user:li", es)
		}
		// null is refused, not read as "unchanged".
		if e := a.expect(patchJSON(path, tokOperator, `{"sample_article_url": null}`), 400).errorBody(t); !strings.Contains(e.Detail, "sample_article_url") {
			t.Errorf("null field: %+v, want it named", e)
		}

		// Off with a reason, kept as an override; off again changes nothing.
		var st1 targetStateView
		a.expect(postJSON(path+"/disable", tokKeyWrite, `{"reason": "栏目改版，暂停采集"}`), 200).decode(t, &st1)
		if !st1.Changed || st1.Target.Enabled {
			t.Errorf("disable: %+v", st1)
		}
		a.expect(postJSON(path+"/disable", tokKeyWrite, ""), 200).decode(t, &st1)
		if st1.Changed || st1.Target.Enabled {
			t.Errorf("disable twice: %+v, want unchanged", st1)
		}
		es := targetAudits(t, st, "lianzhou_tzgg")
		if len(es) != 2 || es[0].Action != "target.disable" || es[0].Actor != "apikey:8(li)" || es[0].Detail != "栏目改版，暂停采集" {
			t.Errorf("audit %+v, want one target.disable with the reason, newest first", es)
		}
		if f := provenanceOf(t, a, yaml.ID)["enabled"]; f.Source != "override" || f.Value != "false" {
			t.Errorf("provenance of enabled: %+v", f)
		}
		// Revert brings the files' value back; a second revert is refused.
		var back targetView
		a.expect(postJSON(path+"/revert", tokOperator, `{"field": "enabled"}`), 200).decode(t, &back)
		if !back.Enabled {
			t.Errorf("revert enabled: %+v, want on again as the files say", back)
		}
		if f := provenanceOf(t, a, yaml.ID)["enabled"]; f.Source != "yaml" {
			t.Errorf("provenance of enabled after revert: %+v", f)
		}
		a.expect(postJSON(path+"/revert", tokOperator, `{"field": "enabled"}`), 400).decode(t, &ref)
		if len(ref.Fields) != 1 || ref.Fields[0].Field != "field" {
			t.Errorf("second revert: %+v, want refused naming field", ref)
		}
		if es := targetAudits(t, st, "lianzhou_tzgg"); len(es) != 3 || es[0].Action != "target.revert" || es[0].Actor != "user:li" {
			t.Errorf("audit after revert %+v", es)
		}
	})
}

// TestTargetCreateInput: refused fields are listed one by one, under the
// names of the request body, and nothing is saved.
func TestTargetCreateInput(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var ref refusalAnswer
	body := fmt.Sprintf(`{"site_id": %d, "target_code": "bad code", "target_name": "",
		"entry_url": "https://elsewhere.test/x/", "dept_binding": "mapped", "expected_cadence_days": -1}`, w.provSite)
	a.expect(postJSON("/api/v1/targets", tokOperator, body), 400).decode(t, &ref)
	got := map[string]bool{}
	for _, f := range ref.Fields {
		got[f.Field] = true
	}
	for _, want := range []string{"target_code", "target_name", "entry_url", "local_dept_id", "expected_cadence_days"} {
		if !got[want] {
			t.Errorf("fields %+v do not name %s", ref.Fields, want)
		}
	}
	a.expect(postJSON("/api/v1/targets", tokOperator, `{"site_id": 9999, "target_name": "x"}`), 400).decode(t, &ref)
	if len(ref.Fields) != 1 || ref.Fields[0].Field != "site_id" {
		t.Errorf("unknown site: %+v, want site_id named", ref)
	}
	// A CMS site: the department must be bound and found before a column
	// is added under it.
	body = fmt.Sprintf(`{"site_id": %d, "target_name": "发改局新栏目", "dept_path": "qyfgw", "column_id": "2851"}`, w.cmsSite)
	a.expect(postJSON("/api/v1/targets", tokOperator, body), 400).decode(t, &ref)
	if !slices.ContainsFunc(ref.Fields, func(f fieldProblem) bool { return f.Field == "dept_path" && strings.Contains(f.Message, "探测") }) {
		t.Errorf("column under an unprobed department: %+v", ref)
	}
	if n := len(audits(t, st, "target")); n != 0 {
		t.Errorf("%d target audit entries after refusals", n)
	}
	ts, err := st.ListTargets(context.Background(), store.TargetFilter{})
	if err != nil || len(ts) != 5 {
		t.Errorf("%d targets after refusals (%v), want the world's 5", len(ts), err)
	}
}

// TestColumnPreview: the preview of a catalog column answers with the
// newest articles its site lists, read live from the simulated web; a
// column whose department is not known yet says so without asking the
// site.
func TestColumnPreview(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	web := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: "../../demo/config", Sim: sim.Options{Seed: 1}})
	a := newAPITestWith(t, st, time.Now(), noWeb, web.Crawler(nil).PreviewColumn)
	col := storetest.CatalogColumn(t, st, "qingcheng", "qcfgw", "2851", "通知公告")
	site, err := st.SiteByCode(ctx, "qingcheng")
	if err != nil {
		t.Fatal(err)
	}
	orphan := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: site.ID, ColumnID: "2999",
		ColumnName: "无主栏目", AdminLevel: "county", LastSeenAt: time.Now()}
	if err := st.UpsertColumnRegistry(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	var newest []string
	published := map[string]string{} // by URL
	for _, ta := range web.Sim.Truth() {
		if ta.SiteCode == "qingcheng" && ta.DeptPath == "qcfgw" && ta.ColumnID == "2851" {
			newest = append(newest, ta.Title)
			published[ta.URL] = ta.PublishTime.In(time.FixedZone("CST", 8*3600)).Format("2006-01-02")
		}
	}

	var pv columnPreviewView
	a.expect(postJSON(idPath("/api/v1/columns/%d/preview", col), tokOperator, ""), 200).decode(t, &pv)
	var got []string
	for _, it := range pv.Items {
		got = append(got, it.Title)
		if it.Date != published[it.URL] {
			t.Errorf("%s: date %q, want the day it was published in China, %q", it.URL, it.Date, published[it.URL])
		}
	}
	slices.Sort(got)
	slices.Sort(newest)
	if pv.Problem != nil || pv.ReadAt == nil || pv.Column.ID != col || !slices.Equal(got, newest) {
		t.Errorf("preview of column 2851: problem %v, read at %v, column %d, titles %q; want the site's %q",
			pv.Problem, pv.ReadAt, pv.Column.ID, got, newest)
	}

	web.Sim.ResetLog()
	a.expect(postJSON(idPath("/api/v1/columns/%d/preview", orphan.ID), tokOperator, ""), 200).decode(t, &pv)
	if pv.Problem == nil || !strings.Contains(*pv.Problem, "站点部门") || pv.ReadAt != nil || len(pv.Items) != 0 {
		t.Errorf("preview of a column without its department: %+v, want a problem naming it and no read", pv)
	}
	if n := len(web.Sim.AllAccess()); n != 0 {
		t.Errorf("the preview of a column without its department asked the web %d times", n)
	}
}
