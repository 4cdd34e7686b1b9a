package onboard

import (
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard/onboardtest"
)

// bundledConfig is the repository's configuration directory.
const bundledConfig = "../../demo/config"

// bundledDirectory is the bundled departments.csv as the wizard sees it.
func bundledDirectory(t testing.TB) *Directory {
	t.Helper()
	return NewDirectory(onboardtest.Departments(t, filepath.Join(bundledConfig, config.DepartmentsFile)))
}

func id(n int64) *int64 { return &n }

// TestSuggest: the suggestions of the wizard's binding step on the
// bundled departments: a department's own name, its abbreviation (发改 for
// 发展和改革) and its short name map to it; the government's disclosure
// catalogue is city_level; a name like no department stays pending.
func TestSuggest(t *testing.T) {
	dir := bundledDirectory(t)
	for _, tc := range []struct {
		name    string
		binding string
		dept    int64
	}{
		{"清远市发展和改革局", model.BindingMapped, 37},
		{"清远市发改局", model.BindingMapped, 37},
		{" 清远市教育局 ", model.BindingMapped, 41},
		{"清远市教育局政府信息公开", model.BindingMapped, 41},
		{"清城区发展和改革局", model.BindingMapped, 2101},
		{"市政府信息公开", model.BindingCityLevel, 0},
		{"清远市人民政府信息公开", model.BindingCityLevel, 0},
		{"清远市人民政府", model.BindingCityLevel, 0},
		{"北江航运集团", model.BindingPending, 0},
		{"", model.BindingPending, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dir.Suggest(tc.name)
			if s.Binding != tc.binding {
				t.Fatalf("binding %s (%s), want %s; candidates %v", s.Binding, s.Reason, tc.binding, s.Candidates)
			}
			switch {
			case tc.dept != 0 && (s.LocalDeptID == nil || *s.LocalDeptID != tc.dept):
				t.Errorf("local_dept_id %v, want %d (%s)", s.LocalDeptID, tc.dept, s.Reason)
			case tc.dept == 0 && s.LocalDeptID != nil:
				t.Errorf("local_dept_id %d on a %s suggestion", *s.LocalDeptID, s.Binding)
			}
			if s.Reason == "" && tc.name != "" {
				t.Errorf("no reason given")
			}
		})
	}
}

// TestSearch: the department search box finds a department by part of
// its name.
func TestSearch(t *testing.T) {
	got := bundledDirectory(t).Search("教育局", 5)
	found := false
	for _, c := range got {
		found = found || c.DeptID == 41
	}
	if !found {
		t.Errorf("search 教育局 = %v, want 清远市教育局 (41) among them", got)
	}
}

// TestSuggestAllKeepsChoice: a person's choice wins over the suggestion;
// rows without a choice start at it.
func TestSuggestAllKeepsChoice(t *testing.T) {
	sites := []Site{{Depts: []Dept{
		{DeptPath: "qyfgw", DisplayName: "清远市发展和改革局", Binding: model.BindingCrossDept},
		{DeptPath: "qyjyj", DisplayName: "清远市教育局"},
	}}}
	bundledDirectory(t).SuggestAll(sites)
	if d := sites[0].Depts[0]; d.Binding != model.BindingCrossDept || d.LocalDeptID != nil || d.Suggested.Binding != model.BindingMapped {
		t.Errorf("chosen row: binding %s %v, suggested %s; want the choice cross_dept kept and mapped suggested", d.Binding, d.LocalDeptID, d.Suggested.Binding)
	}
	if d := sites[0].Depts[1]; d.Binding != model.BindingMapped || d.LocalDeptID == nil || *d.LocalDeptID != 41 {
		t.Errorf("unchosen row: binding %s %v, want mapped 41", d.Binding, d.LocalDeptID)
	}
}

// TestCheckBindings: the wizard does not continue with a pending row,
// and says which; mapped needs a local department that exists; only
// mapped may carry one; the value must be one of the four.
func TestCheckBindings(t *testing.T) {
	b, problems := config.Load(bundledConfig)
	if config.HasErrors(problems) {
		t.Fatalf("bundled config: %v", config.Errors(problems))
	}
	w := &Wizard{Bundle: b}
	dir := bundledDirectory(t)
	good := func() Site {
		return Site{
			BaseURL: "http://www.newcounty.gov.test", AdapterID: "gkmlpt", SiteCode: "newcounty", SiteName: "新县人民政府",
			SiteRole: model.RoleCountyLocal, Params: map[string]string{"sid": "770001"},
			Depts: []Dept{
				{DeptPath: "fgj", DisplayName: "新县发展和改革局", Binding: model.BindingMapped, LocalDeptID: id(37)},
				{DeptPath: "xxgk", DisplayName: "新县政府信息公开", Binding: model.BindingCityLevel},
			},
		}
	}
	if ps := w.Check([]Site{good()}, dir); len(ps) != 0 {
		t.Fatalf("a ready site is refused: %v", ps)
	}
	for _, tc := range []struct {
		name  string
		edit  func(s *Site)
		dept  string
		words string
	}{
		{"pending", func(s *Site) { s.Depts[1].Binding = model.BindingPending }, "xxgk", "pending"},
		{"no choice", func(s *Site) { s.Depts[1].Binding = "" }, "xxgk", "pending"},
		{"mapped without dept", func(s *Site) { s.Depts[0].LocalDeptID = nil }, "fgj", "本地部门"},
		{"mapped to a missing dept", func(s *Site) { s.Depts[0].LocalDeptID = id(999999) }, "fgj", "999999"},
		{"city_level with a dept", func(s *Site) { s.Depts[1].LocalDeptID = id(37) }, "xxgk", "mapped"},
		{"unknown binding", func(s *Site) { s.Depts[1].Binding = "city" }, "xxgk", "city"},
		{"unread dept", func(s *Site) { s.Depts[0].Problem = "请求超时" }, "fgj", "请求超时"},
		{"taken site_code", func(s *Site) { s.SiteCode = "qingcheng" }, "", "qingcheng"},
		{"bad site_code", func(s *Site) { s.SiteCode = "New-County" }, "", "New-County"},
		{"onboarded site", func(s *Site) { s.ConfiguredAs = "qingcheng" }, "", "已接入"},
		{"no sid", func(s *Site) { s.Params = nil }, "", "sid"},
		{"bad role", func(s *Site) { s.SiteRole = "town" }, "", "town"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.edit(&s)
			drafts, ps := w.Drafts([]Site{s}, dir)
			if len(drafts) != 0 {
				t.Errorf("drafts were made: %v", drafts)
			}
			if len(ps) != 1 {
				t.Fatalf("problems %v, want exactly one", ps)
			}
			if ps[0].DeptPath != tc.dept || !strings.Contains(ps[0].Problem, tc.words) {
				t.Errorf("problem %v, want one on row %q saying %q", ps[0], tc.dept, tc.words)
			}
		})
	}
	s := good()
	s.Depts[0].Binding, s.Depts[0].LocalDeptID = model.BindingPending, nil
	s.Depts[1].Binding = model.BindingPending
	if got := Pending([]Site{s}); strings.Join(got, " ") != "newcounty/fgj newcounty/xxgk" {
		t.Errorf("Pending = %v, want both rows", got)
	}
}
