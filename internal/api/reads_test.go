package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestDepartmentTree: departments nest under their parents in OA order; a
// department whose parent was never imported is shown at the top, not
// lost; a search keeps the matches and the departments above them.
func TestDepartmentTree(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var tree list[*departmentNode]
	a.expect(get("/api/v1/departments", tokViewer), 200).decode(t, &tree)
	var shape func(ns []*departmentNode) string
	shape = func(ns []*departmentNode) string {
		var parts []string
		for _, n := range ns {
			s := n.DeptName
			if len(n.Children) > 0 {
				s += "(" + shape(n.Children) + ")"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	if got, want := shape(tree.Items), "清远市人民政府(清远市教育局 清远市发展和改革局) 挂在未导入上级下的部门"; got != want {
		t.Errorf("tree %s, want %s", got, want)
	}
	a.expect(get("/api/v1/departments?q=%E5%B8%82%E5%8F%91%E6%94%B9%E5%B1%80", tokViewer), 200).decode(t, &tree) // 市发改局, a short name
	if got, want := shape(tree.Items), "清远市人民政府(清远市发展和改革局)"; got != want {
		t.Errorf("search by short name: %s, want %s", got, want)
	}
	a.expect(get("/api/v1/departments?q=%E6%B2%A1%E6%9C%89", tokViewer), 200).decode(t, &tree)
	if len(tree.Items) != 0 {
		t.Errorf("search without a match: %d roots", len(tree.Items))
	}
}

// TestDepartmentDetail: a department's page shows each of its targets with
// its last crawl, its last article and whether it is stale — the stale
// rule is three expected cadences without a new article.
func TestDepartmentDetail(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		err := st.RecordTargetRun(context.Background(), &store.TargetRun{TargetID: w.tgtFGW, Runner: "cli",
			StartedAt: fixedNow.Add(-2 * time.Hour), FinishedAt: fixedNow.Add(-time.Hour), Outcome: store.RunOK, Created: 2})
		if err != nil {
			t.Fatal(err)
		}
		var d departmentDetail
		a.expect(get("/api/v1/departments/37", tokViewer), 200).decode(t, &d)
		if d.Department.DeptName != "清远市发展和改革局" || d.Parent == nil || d.Parent.DeptID != 1 || len(d.Children) != 0 {
			t.Errorf("department %+v parent %+v children %+v", d.Department, d.Parent, d.Children)
		}
		if len(d.Targets) != 2 {
			t.Fatalf("%d targets, want the enabled and the disabled one", len(d.Targets))
		}
		fgw, off := d.Targets[0], d.Targets[1]
		if fgw.TargetCode != "qyfgw_2849" || off.TargetCode != "qyfgw_off" {
			t.Fatalf("targets %s, %s", fgw.TargetCode, off.TargetCode)
		}
		// Newest article 30 days ago at a weekly cadence: more than 21 days.
		if !fgw.Stale {
			t.Error("weekly column quiet for 30 days is not stale")
		}
		if off.Stale {
			t.Error("a disabled target is reported stale")
		}
		if fgw.LastCrawledAt == nil || !fgw.LastCrawledAt.Equal(fixedNow.Add(-time.Hour)) {
			t.Errorf("last crawled %v", fgw.LastCrawledAt)
		}
		if fgw.LastRun == nil || fgw.LastRun.Outcome != store.RunOK || fgw.LastRun.Created != 2 {
			t.Errorf("last run %+v", fgw.LastRun)
		}
		if fgw.LastArticle == nil || fgw.LastArticle.Title != "发改局工作动态" {
			t.Errorf("last article %+v, want the newest one stored", fgw.LastArticle)
		}
		if off.LastRun != nil || off.LastArticle != nil {
			t.Errorf("disabled target has run %+v article %+v", off.LastRun, off.LastArticle)
		}

		// The stale boundary: 21 days is not yet stale, a little more is.
		a.now = w.now.Add(-30*24*time.Hour + 21*24*time.Hour)
		a.expect(get("/api/v1/departments/37", tokViewer), 200).decode(t, &d)
		if d.Targets[0].Stale {
			t.Error("exactly three weekly cadences quiet is reported stale")
		}
		a.now = a.now.Add(time.Minute)
		a.expect(get("/api/v1/departments/37", tokViewer), 200).decode(t, &d)
		if !d.Targets[0].Stale {
			t.Error("three weekly cadences and a minute quiet is not stale")
		}
	})
}

// TestStaleTargets: the stale list is the enabled targets past three
// cadences, with their ids.
func TestStaleTargets(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var l list[staleView]
	a.expect(get("/api/v1/targets/stale", tokViewer), 200).decode(t, &l)
	var got []string
	for _, s := range l.Items {
		got = append(got, s.TargetCode)
		if s.TargetCode == "qyfgw_2849" && (s.TargetID != w.tgtFGW || s.StaleAfterDays != 21) {
			t.Errorf("stale entry %+v, want id %d and 21 days", s, w.tgtFGW)
		}
	}
	// The provincial column published yesterday; the disabled one is not
	// watched; the other two never published since they were added 400
	// days ago.
	if want := []string{"gov_zcwj", "qyfgw_2849", "szfxxgk_1"}; !slices.Equal(got, want) {
		t.Errorf("stale %q, want %q", got, want)
	}
}

// TestSitesAndTargets: the read-only lists filter as documented.
func TestSitesAndTargets(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var sites list[siteView]
	a.expect(get("/api/v1/sites?site_role=nation_ref", tokViewer), 200).decode(t, &sites)
	if len(sites.Items) != 1 || sites.Items[0].SiteCode != "gov_ref" || sites.Items[0].CMSAdapter != nil {
		t.Errorf("nation_ref sites %+v", sites.Items)
	}
	var sds list[siteDepartmentView]
	a.expect(get(idPath("/api/v1/sites/%d/departments", w.cmsSite), tokViewer), 200).decode(t, &sds)
	if len(sds.Items) != 2 || sds.Items[0].DeptPath != "qyfgw" || *sds.Items[0].LocalDeptID != 37 || sds.Items[1].DeptBinding != "city_level" {
		t.Errorf("site departments %+v", sds.Items)
	}
	a.expect(get(idPath("/api/v1/sites/%d/departments?dept_binding=mapped", w.cmsSite), tokViewer), 200).decode(t, &sds)
	if len(sds.Items) != 1 {
		t.Errorf("mapped site departments %+v", sds.Items)
	}
	var tl list[targetView]
	codes := func() []string {
		var out []string
		for _, t := range tl.Items {
			out = append(out, t.TargetCode)
		}
		return out
	}
	a.expect(get("/api/v1/targets?dept_id=37", tokViewer), 200).decode(t, &tl)
	if got := codes(); !slices.Equal(got, []string{"qyfgw_2849", "qyfgw_off"}) {
		t.Errorf("targets of 37: %q", got)
	}
	a.expect(get("/api/v1/targets?dept_id=37&enabled=false", tokViewer), 200).decode(t, &tl)
	if got := codes(); !slices.Equal(got, []string{"qyfgw_off"}) {
		t.Errorf("disabled targets of 37: %q", got)
	}
	a.expect(get(idPath("/api/v1/targets?site_id=%d", w.provSite), tokViewer), 200).decode(t, &tl)
	if got := codes(); !slices.Equal(got, []string{"gd_zcwj"}) {
		t.Errorf("targets of the provincial site: %q", got)
	}
}

// TestCrawlLogs: the crawl log filters and pages like the articles.
func TestCrawlLogs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		type logPage struct {
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}
		ids := func(p logPage) []int64 {
			var out []int64
			for _, it := range p.Items {
				out = append(out, it.ID)
			}
			return out
		}
		L := w.logs
		cases := []struct {
			query string
			want  []int64
		}{
			{"", []int64{L["gd robots"], L["gd list"], L["fgw detail failed"], L["fgw list"]}},
			{"host=www.gd.gov.test", []int64{L["gd robots"], L["gd list"]}},
			{idPath("site_id=%d", w.cmsSite), []int64{L["fgw detail failed"], L["fgw list"]}},
			{idPath("target_id=%d", w.tgtProv), []int64{L["gd robots"], L["gd list"]}},
			{"purpose=list", []int64{L["gd list"], L["fgw list"]}},
			{"status=failure", []int64{L["fgw detail failed"]}},
			{"status=success&host=www.gdqy.gov.test", []int64{L["fgw list"]}},
			// from is inclusive, to exclusive: the rows at 00:00 and 00:30 UTC, not the one at 01:00.
			{"from=2026-04-23T08:00:00%2B08:00&to=2026-04-23T01:00:00Z", []int64{L["gd list"], L["fgw detail failed"]}},
		}
		for _, c := range cases {
			var p logPage
			a.expect(get("/api/v1/crawl-logs?"+c.query, tokViewer), 200).decode(t, &p)
			if got := ids(p); !slices.Equal(got, c.want) {
				t.Errorf("?%s: %v, want %v", c.query, got, c.want)
			}
		}
		var p1, p2 logPage
		a.expect(get("/api/v1/crawl-logs?limit=3", tokViewer), 200).decode(t, &p1)
		if p1.NextCursor == nil {
			t.Fatal("no next_cursor on a full page")
		}
		a.expect(get("/api/v1/crawl-logs?limit=3&cursor="+*p1.NextCursor, tokViewer), 200).decode(t, &p2)
		if got := append(ids(p1), ids(p2)...); !slices.Equal(got, cases[0].want) || p2.NextCursor != nil {
			t.Errorf("two pages %v (next %v), want %v", got, p2.NextCursor, cases[0].want)
		}
		a.expect(get("/api/v1/crawl-logs?from=2026-04-23T01:00:00Z&to=2026-04-23T00:00:00Z", tokViewer), 400)
		a.expect(get("/api/v1/crawl-logs?cursor="+encodePageCursor(articleCursor, 3), tokViewer), 400)
	})
}

// TestColumns: the registry filters by subscription, level, tag, site and
// adapter.
func TestColumns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		cases := []struct {
			query string
			want  []int64
		}{
			{"", []int64{w.colSubscribed, w.colFree}},
			{"subscribed=true", []int64{w.colSubscribed}},
			{"subscribed=false", []int64{w.colFree}},
			{"tag=%E8%A7%84%E5%88%92%E8%AE%A1%E5%88%92", []int64{w.colFree}}, // 规划计划
			{"admin_level=county", nil},
			{idPath("site_id=%d", w.provSite), nil},
			{"adapter_id=gkmlpt&active=true", []int64{w.colSubscribed, w.colFree}},
			{"active=false", nil},
		}
		for _, c := range cases {
			var l list[columnView]
			a.expect(get("/api/v1/columns?"+c.query, tokViewer), 200).decode(t, &l)
			var got []int64
			for _, col := range l.Items {
				got = append(got, col.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("?%s: %v, want %v", c.query, got, c.want)
			}
		}
	})
}

// TestUnknownPathsAndMethods: outside the documented operations the API
// still answers in JSON: 404 for a path it does not have, 405 with Allow
// for a method a path does not take.
func TestUnknownPathsAndMethods(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	if e := a.expect(get("/api/v1/nothing-here", tokViewer), 404).errorBody(t); e.Error != "not_found" {
		t.Errorf("unknown path: %+v", e)
	}
	res := a.expect(request{method: http.MethodDelete, target: "/api/v1/sites/1", token: tokAdmin}, 405)
	if res.header.Get("Allow") != "GET" || res.errorBody(t).Error != "method_not_allowed" {
		t.Errorf("405 Allow %q body %s", res.header.Get("Allow"), res.body)
	}
	res = a.expect(get("/api/v1/export", tokViewer), 405)
	if res.header.Get("Allow") != "POST" {
		t.Errorf("GET export: Allow %q, want POST", res.header.Get("Allow"))
	}
}

// TestInternalErrorsHideTheirCause: a database failure is a 500 whose body
// says nothing about the database.
func TestInternalErrorsHideTheirCause(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	st.Close()
	e := a.expect(get("/api/v1/articles", tokViewer), 500).errorBody(t)
	if e.Error != "internal" || strings.Contains(strings.ToLower(e.Detail), "sql") || strings.Contains(e.Detail, "closed") {
		t.Errorf("500 body %+v", e)
	}
	if !strings.Contains(a.logs.String(), "query articles") {
		t.Errorf("the cause is not logged: %s", a.logs.String())
	}
}
