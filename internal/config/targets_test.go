package config

import (
	"encoding/json"
	"slices"
	"testing"

	"zhizhi/internal/model"
)

func goodBundle(t *testing.T) *Bundle {
	t.Helper()
	b, ps := Load("testdata/lint_good")
	if HasErrors(ps) {
		t.Fatal(ps)
	}
	return b
}

func siteByCode(t *testing.T, b *Bundle, code string) *SiteFile {
	t.Helper()
	for _, s := range b.Sites {
		if s.SiteCode == code {
			return s
		}
	}
	t.Fatalf("no site %s", code)
	return nil
}

func TestTargetsFlattenGkmlptColumns(t *testing.T) {
	b := goodBundle(t)
	qc := siteByCode(t, b, "qingcheng")
	var codes []string
	for _, tg := range qc.Targets() {
		codes = append(codes, tg.TargetCode)
	}
	if want := []string{"qingcheng_qcfgw_2849", "qingcheng_qcfgw_2850", "qingcheng_gzbg"}; !slices.Equal(codes, want) {
		t.Fatalf("codes = %v, want %v", codes, want)
	}
	tg := qc.Targets()[0]
	if tg.TargetName != "清远市清城区发展和改革局｜规章文件" || tg.ChannelName != "规章文件" ||
		tg.ChannelPath != "信息公开｜规章文件" || tg.ContentCategory != "法规文件" || tg.ExpectedCadenceDays != 7 ||
		tg.ColumnID != "2849" || tg.DeptBinding != model.BindingMapped || *tg.LocalDeptID != 2101 ||
		tg.EntryURL != "http://www.qingcheng.gov.test/qcfgw/gkmlpt/index#2849" {
		t.Errorf("first target = %+v", tg)
	}
	if tg.Pos.Line != 15 || tg.Pos.Column != 9 {
		t.Errorf("first target declared at %s, want line 15 column 9", tg.Pos)
	}
	// An unquoted column_id is read as text, and the default cadence applies.
	second := qc.Targets()[1]
	if second.ColumnID != "2850" || second.ExpectedCadenceDays != DefaultCadenceDays {
		t.Errorf("second target column %q cadence %d", second.ColumnID, second.ExpectedCadenceDays)
	}
	m := second.Model()
	if m.DeptID == nil || *m.DeptID != 2101 || m.Source != model.SourceYAML || m.ScheduleCron != AssignCron("qingcheng_qcfgw_2850") {
		t.Errorf("model = %+v", m)
	}
	third := qc.Targets()[2].Model()
	if third.DeptID != nil {
		t.Errorf("city_level target has dept_id %d, want NULL", *third.DeptID)
	}
}

func TestEffectiveTemplateMergesKeyByKey(t *testing.T) {
	b := goodBundle(t)
	gd := siteByCode(t, b, "gd_ref")
	targets := gd.Targets()
	zcwj := targets[0]
	eff := EffectiveTemplate(gd, &zcwj)
	if eff.Detail.Body != "div#zoom" {
		t.Errorf("body = %q, want the override div#zoom", eff.Detail.Body)
	}
	if eff.Detail.Title != "h1" || eff.List.Item != "ul.list li" || eff.List.MaxPages != 50 ||
		!slices.Equal(eff.Detail.Remove, []string{"div.share"}) {
		t.Errorf("keys not overridden must come from the site template: %+v", eff)
	}
	if gd.Template.Detail.Body != "div.content" {
		t.Errorf("merging changed the site template: body = %q", gd.Template.Detail.Body)
	}
	tzgg := targets[1]
	if got := EffectiveTemplate(gd, &tzgg); got.Detail.Body != "div.content" {
		t.Errorf("target without override: body = %q", got.Detail.Body)
	}
	if got := EffectiveTemplate(siteByCode(t, b, "qingcheng"), nil); got != nil {
		t.Errorf("adapter site template = %+v, want nil", got)
	}
	// The override is stored as JSON holding only what it sets.
	var stored map[string]any
	if err := json.Unmarshal(zcwj.Model().ParserOverride, &stored); err != nil {
		t.Fatal(err)
	}
	if _, hasList := stored["list"]; hasList || stored["detail"].(map[string]any)["body"] != "div#zoom" {
		t.Errorf("parser_override JSON = %v", stored)
	}
}

func TestSiteModel(t *testing.T) {
	b := goodBundle(t)
	tests := []struct {
		code                             string
		yamlPath, adapter, strategy, acc string
	}{
		{"gd_ref", "lint_good/sites/gd_ref.yaml", "", model.StrategyDirect, model.AccessFull},
		{"gdqy", "", "gkmlpt", model.StrategyBrowser, model.AccessFull},
		{"qingcheng", "", "gkmlpt", model.StrategyDirect, model.AccessFull},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			m := b.SiteModel(siteByCode(t, b, tc.code))
			if m.YAMLPath != tc.yamlPath || m.CMSAdapter != tc.adapter || m.DefaultFetchStrategy != tc.strategy || m.Access != tc.acc {
				t.Errorf("site = %+v", m)
			}
			if (m.CMSAdapter == "") != (m.AdapterParams == nil) {
				t.Errorf("adapter_params %s with cms_adapter %q", m.AdapterParams, m.CMSAdapter)
			}
		})
	}
}

func TestSplitSelector(t *testing.T) {
	tests := []struct{ in, css, attr string }{
		{"a@href", "a", "href"},
		{"span.date", "span.date", ""},
		{"meta[name=PubDate]@content", "meta[name=PubDate]", "content"},
		{"a[href*='@']", "a[href*='@']", ""},
		{" a.next @href", "a.next", "href"},
	}
	for _, tc := range tests {
		css, attr := SplitSelector(tc.in)
		if css != tc.css || attr != tc.attr {
			t.Errorf("SplitSelector(%q) = %q, %q; want %q, %q", tc.in, css, attr, tc.css, tc.attr)
		}
	}
}

func TestExpandURL(t *testing.T) {
	got := ExpandURL("{base_url}/{dept_path}/gkmlpt/api/all/{column_id}?page={page}&sid={sid}&x={unknown}",
		map[string]string{"base_url": "http://a.gov.test", "dept_path": "qyfgw", "column_id": "2849", "page": "2", "sid": "763042"})
	if want := "http://a.gov.test/qyfgw/gkmlpt/api/all/2849?page=2&sid=763042&x={unknown}"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
