package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantProblem is one expected lint finding: file (under the linted dir),
// exact line and column, and a substring of the message.
type wantProblem struct {
	file      string
	line, col int
	contains  string
	warning   bool
}

// lintBadWant lists every finding in testdata/lint_bad. The test also fails
// on any finding not listed, so a new false positive is caught too.
var lintBadWant = []wantProblem{
	// cms/gkmlpt.yaml
	{"cms/gkmlpt.yaml", 7, 8, "lacks {page}", false},
	{"cms/gkmlpt.yaml", 12, 9, `body selector "div.content >" in detail does not compile`, false},
	{"cms/gkmlpt.yaml", 15, 1, `unknown key "resilence" in adapter gkmlpt — did you mean resilience?`, false},
	// cms/trs.yaml: an adapter missing its sections
	{"cms/trs.yaml", 1, 1, "missing required key detail", false},
	{"cms/trs.yaml", 1, 1, "missing required key detect", false},
	{"cms/trs.yaml", 1, 1, "missing required key list", false},
	{"cms/trs.yaml", 1, 1, "missing required key site_template", false},
	// sites/broken.yaml: malformed YAML, with its line
	{"sites/broken.yaml", 4, 1, "malformed YAML: mapping values are not allowed", false},
	// sites/empty_site.yaml
	{"sites/empty_site.yaml", 8, 1, "depts is only allowed on a site with cms_adapter", false},
	{"sites/empty_site.yaml", 9, 1, "empty targets list", true},
	// sites/gd_ref.yaml: a template site with many mistakes
	{"sites/gd_ref.yaml", 3, 11, `base_url "www.gd.gov.test" is relative`, false},
	{"sites/gd_ref.yaml", 4, 12, `site_role "province" is not a valid value`, false},
	{"sites/gd_ref.yaml", 5, 9, `access "everything" is not a valid value`, false},
	{"sites/gd_ref.yaml", 6, 1, `unknown key "respect_robot" in site — did you mean respect_robots?`, false},
	{"sites/gd_ref.yaml", 9, 13, `format "xml" is not a valid value`, false},
	{"sites/gd_ref.yaml", 12, 16, "max_pages 5000 is out of range", false},
	{"sites/gd_ref.yaml", 15, 11, `body selector "div[class=" in template detail does not compile`, false},
	{"sites/gd_ref.yaml", 20, 25, "uses scheme ftp", false},
	{"sites/gd_ref.yaml", 22, 5, "local_dept_id is set but dept_binding is external_ref", false},
	{"sites/gd_ref.yaml", 23, 5, "schedule is written by hand", false},
	{"sites/gd_ref.yaml", 24, 28, "expected_cadence_days of target gd_zcwj must be an integer", false},
	{"sites/gd_ref.yaml", 27, 16, `entry_url "/zwgk/tzgg/" is relative`, false},
	{"sites/gd_ref.yaml", 28, 19, "dept_binding pending is a runtime state", false},
	// sites/nation.yaml
	{"sites/nation.yaml", 3, 1, "key site_name repeated", false},
	{"sites/nation.yaml", 4, 11, "has a path, query or fragment", false},
	{"sites/nation.yaml", 6, 17, "respect_robots of site must be true or false", false},
	{"sites/nation.yaml", 9, 5, "template list is missing required key items", false},
	{"sites/nation.yaml", 11, 15, `page_url "feed.json" has no {n}`, false},
	{"sites/nation.yaml", 15, 27, `remove[1] selector "p::first" does not compile`, false},
	{"sites/nation.yaml", 19, 16, "entry_url host sousuo.gov.test differs from base_url host www.gov.test", false},
	{"sites/nation.yaml", 23, 16, `unknown key "bodyy" in target gov_zcwj parser_override detail — did you mean body?`, false},
	// sites/owned.yaml: owned for a host not pinned to loopback
	{"sites/owned.yaml", 7, 8, "owned: true for www.owned.gov.test, which ZHIZHI_RESOLVE does not map to a loopback address", false},
	// sites/qingcheng.yaml: a gkmlpt site
	{"sites/qingcheng.yaml", 6, 17, `fetch_strategy "fast" is not a valid value`, false},
	{"sites/qingcheng.yaml", 7, 1, "adapter gkmlpt requires adapter_params sid", false},
	{"sites/qingcheng.yaml", 9, 1, "template is not allowed on a site with cms_adapter", false},
	{"sites/qingcheng.yaml", 13, 5, "dept_binding mapped needs local_dept_id", false},
	{"sites/qingcheng.yaml", 16, 10, `column_id "2849" appears twice in dept qcfgw`, false},
	{"sites/qingcheng.yaml", 17, 64, "expected_cadence_days 0 is not a positive number", false},
	{"sites/qingcheng.yaml", 18, 5, `dept_path "qcfgw" appears twice in site qingcheng`, false},
	{"sites/qingcheng.yaml", 21, 5, "empty columns list", true},
	{"sites/qingcheng.yaml", 20, 5, "local_dept_id 9999 is not in departments.csv", false},
	{"sites/qingcheng.yaml", 22, 5, "dept xxgk is missing required key dept_binding", false},
	{"sites/qingcheng.yaml", 24, 38, `duplicate target_code "gd_zcwj"`, false},
	// sites/qingcheng_copy.yaml: a second file for the same host
	{"sites/qingcheng_copy.yaml", 14, 10, "target qingcheng_copy_qcfgw_2850 collects the same column as target qingcheng_qcfgw_2850 (dept qcfgw column_id 2850 on www.qingcheng.gov.test)", false},
	// sites/qingxin.yaml
	{"sites/qingxin.yaml", 1, 1, `duplicate site_code "qingcheng"`, false},
	{"sites/qingxin.yaml", 5, 1, `cms_adapter "gkmlp" has no adapter file — did you mean gkmlpt?`, false},
	{"sites/qingxin.yaml", 11, 10, `duplicate target_code "qingcheng_qcfgw_2849" (derived`, false},
	// sites/zdup.yaml: two targets on one entry page
	{"sites/zdup.yaml", 11, 6, "target zdup_zcwj2 collects the same column as target zdup_zcwj (entry_url HTTPS://www.zdup.gov.test/zwgk/zcwj/)", false},
	// topic_synonyms.yaml
	{"topic_synonyms.yaml", 4, 7, "synonyms of topic 规章文件 must be a list of strings", false},
	{"topic_synonyms.yaml", 6, 5, `synonym "发展规划" is listed under two topics, 规划计划 and 发展`, false},
}

func TestLintBadReportsEveryMistake(t *testing.T) {
	dir := filepath.Join("testdata", "lint_bad")
	got := Lint(dir)
	if !HasErrors(got) {
		t.Fatal("lint_bad has errors, but HasErrors is false")
	}
	matched := make([]bool, len(got))
	for _, w := range lintBadWant {
		file := filepath.Join(dir, filepath.FromSlash(w.file))
		found := false
		for i, p := range got {
			if p.Pos.File == file && p.Pos.Line == w.line && p.Pos.Column == w.col &&
				p.Warning == w.warning && strings.Contains(p.String(), w.contains) {
				found, matched[i] = true, true
			}
		}
		if !found {
			t.Errorf("missing %s:%d:%d: %s", file, w.line, w.col, w.contains)
		}
	}
	for i, p := range got {
		if !matched[i] {
			t.Errorf("unexpected: %s", p)
		}
	}
	// Every line has the documented shape, and the output is sorted.
	for i, p := range got {
		s := p.String()
		if !strings.HasPrefix(s, fmt.Sprintf("%s:%d:%d: ", p.Pos.File, p.Pos.Line, p.Pos.Column)) || !strings.Contains(s, " — ") {
			t.Errorf("problem %q is not `path:line:column: what — what to do`", s)
		}
		if i > 0 {
			a, b := got[i-1].Pos, p.Pos
			if a.File > b.File || a.File == b.File && (a.Line > b.Line || a.Line == b.Line && a.Column > b.Column) {
				t.Errorf("problems not sorted: %s before %s", a, b)
			}
		}
	}
}

func TestLintGoodIsClean(t *testing.T) {
	b, problems := Load(filepath.Join("testdata", "lint_good"))
	for _, p := range problems {
		t.Errorf("unexpected: %s", p)
	}
	sites, targets, adapters := b.Counts()
	if sites != 3 || targets != 7 || adapters != 1 {
		t.Errorf("counts = %d sites, %d targets, %d adapters; want 3, 7, 1", sites, targets, adapters)
	}
}

// TestLintSnippets checks single rules on small files, one scenario each.
func TestLintSnippets(t *testing.T) {
	const head = "site_code: s1\nsite_name: S\nbase_url: https://a.gov.test\nsite_role: county_local\n"
	const tmpl = "template:\n  list: {item: li, link: \"a@href\"}\n  detail: {title: h1, body: div}\n"
	tests := []struct {
		name string
		site string
		want string // substring of the one expected error; "" means clean
		line int
	}{
		{"clean template site", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: https://a.gov.test/x/, dept_binding: city_level}\n", "", 0},
		{"schedule_cron by hand", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: https://a.gov.test/x/, dept_binding: city_level, schedule_cron: \"0 1 * * *\"}\n", "schedule_cron is written by hand", 9},
		{"cron at site level", head + "cron: \"0 1 * * *\"\n" + tmpl + "targets: []\n", "cron is written by hand", 5},
		{"missing dept_binding", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: https://a.gov.test/x/}\n", "missing required key dept_binding", 9},
		{"mapped needs local_dept_id", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: https://a.gov.test/x/, dept_binding: mapped}\n", "dept_binding mapped needs local_dept_id", 9},
		{"bad binding suggests", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: https://a.gov.test/x/, dept_binding: maped, local_dept_id: 3}\n", "did you mean mapped?", 9},
		{"template site without template", head + "targets: []\n", "missing required key template", 1},
		{"javascript url", head + tmpl + "targets:\n  - {target_code: t1, target_name: T, entry_url: \"javascript:alert(1)\", dept_binding: city_level}\n", "uses scheme javascript", 9},
		{"max_pages zero", head + "template:\n  list: {item: li, link: \"a@href\", max_pages: 0}\n  detail: {title: h1, body: div}\ntargets: []\n", "max_pages 0 is out of range", 6},
		{"selector attr suffix is not compiled", head + "template:\n  list: {item: li, link: \"a[href*='@']@href\"}\n  detail: {title: h1, body: div}\ntargets: []\n", "", 0},
		{"remove of the wrong type reported once", head + "template:\n  list: {item: li, link: \"a@href\"}\n  detail: {title: h1, body: div, remove: 5}\ntargets: []\n", "remove of template detail must be a list of strings", 7},
		{"site file that is a list", "- a\n- b\n", "a site file must be a mapping", 1},
		{"attachments ocr", head + "attachments: {ocr: true}\n" + tmpl + "targets: []\n", "", 0},
		{"attachments unknown key", head + "attachments: {orc: true}\n" + tmpl + "targets: []\n", "did you mean ocr?", 5},
		{"attachments ocr not a boolean", head + "attachments: {ocr: 是}\n" + tmpl + "targets: []\n", "ocr", 5},
		{"site_code with capitals", strings.Replace(head, "s1", "S1", 1) + tmpl + "targets: []\n", "is not a valid code", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "sites"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sites", "s1.yaml"), []byte(tc.site), 0o644); err != nil {
				t.Fatal(err)
			}
			errs := Errors(Lint(dir))
			if tc.want == "" {
				for _, p := range errs {
					t.Errorf("unexpected: %s", p)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].What+" — "+errs[0].Fix, tc.want) || errs[0].Pos.Line != tc.line {
				t.Errorf("want one error at line %d containing %q, got:", tc.line, tc.want)
				for _, p := range errs {
					t.Errorf("  %s", p)
				}
			}
		})
	}
}

func TestLintMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	ps := Lint(dir)
	if len(ps) != 1 || !strings.Contains(ps[0].String(), dir+": configuration directory not found") {
		t.Fatalf("got %v", ps)
	}
}

func TestClosest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"site_nmae", "site_name"},
		{"respect_robot", "respect_robots"},
		{"zzzzzzzzzzzz", ""},
	}
	for _, tc := range tests {
		if got := closest(tc.in, siteKeys); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBundledConfigLintsClean keeps the example config shipped in the
// repository (config/) free of lint errors and warnings.
func TestBundledConfigLintsClean(t *testing.T) {
	dir := filepath.Join("..", "..", "demo", "config")
	if _, err := os.Stat(filepath.Join(dir, SitesDir)); err != nil {
		t.Skipf("no bundled config: %v", err)
	}
	b, problems := Load(dir)
	for _, p := range problems {
		t.Errorf("bundled config: %s", p)
	}
	if sites, targets, _ := b.Counts(); sites == 0 || targets == 0 {
		t.Errorf("bundled config has %d sites and %d targets", sites, targets)
	}
}

// TestOwnedNeedsLoopback: owned: true is accepted only when the resolve map
// pins the site's host to a loopback address.
func TestOwnedNeedsLoopback(t *testing.T) {
	dir := filepath.Join("testdata", "lint_bad")
	file := filepath.Join(dir, "sites", "owned.yaml")
	for _, tc := range []struct {
		name    string
		resolve map[string]string
		refused bool
	}{
		{"no resolve map", nil, true},
		{"another host pinned", map[string]string{"www.other.gov.test": "127.0.0.1:18080"}, true},
		{"pinned to a private address", map[string]string{"www.owned.gov.test": "10.0.0.7:80"}, true},
		{"pinned to loopback", map[string]string{"www.owned.gov.test": "127.0.0.1:18080"}, false},
		{"pinned to IPv6 loopback", map[string]string{"www.owned.gov.test": "[::1]:18080"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := false
			for _, p := range LintWith(dir, Options{Resolve: tc.resolve}) {
				if p.Pos.File == file {
					if p.Warning || p.Pos.Line != 7 || p.Pos.Column != 8 || !strings.Contains(p.What, "owned: true") {
						t.Errorf("unexpected: %s", p)
					}
					refused = true
				}
			}
			if refused != tc.refused {
				t.Errorf("owned: true refused %v, want %v", refused, tc.refused)
			}
		})
	}
}

// TestAttachmentOCRReachesTheSite: attachments.ocr is off unless written,
// and reaches the crawl_site row when it is.
func TestAttachmentOCRReachesTheSite(t *testing.T) {
	const site = "site_code: s1\nsite_name: S\nbase_url: https://a.gov.test\nsite_role: county_local\n%s" +
		"template:\n  list: {item: li, link: \"a@href\"}\n  detail: {title: h1, body: div}\ntargets: []\n"
	for _, tc := range []struct {
		yaml string
		want bool
	}{{"", false}, {"attachments: {ocr: false}\n", false}, {"attachments: {ocr: true}\n", true}} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "sites"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sites", "s1.yaml"), []byte(fmt.Sprintf(site, tc.yaml)), 0o644); err != nil {
			t.Fatal(err)
		}
		b, problems := Load(dir)
		if errs := Errors(problems); len(errs) > 0 || b == nil || len(b.Sites) != 1 {
			t.Fatalf("%q: load: %v", tc.yaml, errs)
		}
		if got := b.SiteModel(b.Sites[0]).AttachmentOCR; got != tc.want {
			t.Errorf("%q: attachment OCR %v; want %v", tc.yaml, got, tc.want)
		}
	}
}
