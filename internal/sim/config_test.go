package sim

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// The bundled config/ must describe this world: these structs hold just the
// keys the checks need.
type cfgSite struct {
	SiteCode      string            `yaml:"site_code"`
	BaseURL       string            `yaml:"base_url"`
	CMSAdapter    string            `yaml:"cms_adapter"`
	Access        string            `yaml:"access"`
	Owned         bool              `yaml:"owned"`
	AdapterParams map[string]string `yaml:"adapter_params"`
	Depts         []struct {
		DeptPath    string `yaml:"dept_path"`
		DeptBinding string `yaml:"dept_binding"`
		LocalDeptID int    `yaml:"local_dept_id"`
		Columns     []struct {
			ColumnID string `yaml:"column_id"`
			Name     string `yaml:"name"`
		} `yaml:"columns"`
	} `yaml:"depts"`
	Template struct {
		List   map[string]any `yaml:"list"`
		Detail map[string]any `yaml:"detail"`
	} `yaml:"template"`
	Targets []struct {
		TargetCode       string `yaml:"target_code"`
		EntryURL         string `yaml:"entry_url"`
		SampleArticleURL string `yaml:"sample_article_url"`
		DeptBinding      string `yaml:"dept_binding"`
		LocalDeptID      int    `yaml:"local_dept_id"`
	} `yaml:"targets"`
}

func configDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../demo/config")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadSites(t *testing.T) []cfgSite {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(configDir(t), "sites", "*.yaml"))
	var sites []cfgSite
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s cfgSite
		if err := yaml.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if filepath.Base(f) != s.SiteCode+".yaml" {
			t.Errorf("%s holds site_code %s", f, s.SiteCode)
		}
		sites = append(sites, s)
	}
	return sites
}

func departmentIDs(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(configDir(t), "departments.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "DEPT_ID,DEPT_NAME,PARENT_DEPT_ID,DEPT_LEVEL,DEPT_CODE,SHORT_NAME,FULL_NAME,STATE,ORDER_ID,UPDATED_AT"
	if strings.Join(rows[0], ",") != want {
		t.Errorf("departments.csv header %v", rows[0])
	}
	if n := len(rows) - 1; n < 100 || n > 200 {
		t.Errorf("departments.csv has %d departments, want 100–200", n)
	}
	ids := map[string]bool{}
	for _, r := range rows[1:] {
		if ids[r[0]] {
			t.Errorf("duplicate DEPT_ID %s", r[0])
		}
		ids[r[0]] = true
	}
	for _, r := range rows[1:] {
		if r[2] != "" && !ids[r[2]] {
			t.Errorf("department %s has unknown parent %s", r[0], r[2])
		}
	}
	return ids
}

func TestConfigDescribesTheWorld(t *testing.T) {
	w := startWorld(t, Options{Seed: 11})
	c := client(w)
	cookie := clearance(t, w, c)
	depts := departmentIDs(t)
	sites := loadSites(t)
	if len(sites) != len(w.sites) {
		t.Errorf("%d site files for %d simulated hosts", len(sites), len(w.sites))
	}
	var cms struct {
		Detail     map[string]any `yaml:"detail"`
		Resilience struct {
			Escalate struct {
				Status         []int    `yaml:"status"`
				BodySignatures []string `yaml:"body_signatures"`
			} `yaml:"escalate_to_browser_on"`
		} `yaml:"resilience"`
	}
	b, err := os.ReadFile(filepath.Join(configDir(t), "cms", "gkmlpt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cms); err != nil {
		t.Fatal(err)
	}
	challenge := get(t, c, "GET", "http://www.qingyuan.gov.test/xxgk/gkmlpt/index")
	for _, sig := range cms.Resilience.Escalate.BodySignatures {
		if !bytes.Contains(challenge.body, []byte(sig)) {
			t.Errorf("challenge page lacks the adapter's body signature %q", sig)
		}
	}
	if len(cms.Resilience.Escalate.Status) != 1 || cms.Resilience.Escalate.Status[0] != challenge.status {
		t.Errorf("adapter escalates on %v, challenge answers %d", cms.Resilience.Escalate.Status, challenge.status)
	}

	configured := map[string]bool{}
	for _, cs := range sites {
		s := w.byHost[strings.TrimPrefix(cs.BaseURL, "http://")]
		if s == nil || s.Code != cs.SiteCode {
			t.Errorf("%s: base_url %s is no simulated host of that code", cs.SiteCode, cs.BaseURL)
			continue
		}
		if cs.Owned {
			t.Errorf("%s: owned must be false in the bundled (polite) config", cs.SiteCode)
		}
		if (cs.Access == "summary") != (s.Kind == kindNews) {
			t.Errorf("%s: access %q", cs.SiteCode, cs.Access)
		}
		if cs.CMSAdapter == "gkmlpt" {
			if cs.AdapterParams["sid"] != s.SID {
				t.Errorf("%s: sid %q, site serves %q", cs.SiteCode, cs.AdapterParams["sid"], s.SID)
			}
			for _, d := range cs.Depts {
				sd := s.dept(d.DeptPath)
				if sd == nil {
					t.Errorf("%s: dept %s not on the site", cs.SiteCode, d.DeptPath)
					continue
				}
				checkBinding(t, cs.SiteCode+"/"+d.DeptPath, d.DeptBinding, d.LocalDeptID, depts)
				idx := fetchAs(t, c, cookie, cs.BaseURL+"/"+d.DeptPath+"/gkmlpt/index")
				for _, col := range d.Columns {
					if !strings.Contains(string(idx.body), fmt.Sprintf("{id: %s, name: '%s'", col.ColumnID, col.Name)) {
						t.Errorf("%s/%s: column %s %q not in the TREE", cs.SiteCode, d.DeptPath, col.ColumnID, col.Name)
					}
					configured[cs.SiteCode+"_"+d.DeptPath+"_"+col.ColumnID] = true
				}
			}
			for _, sample := range samplesOf(w, s) {
				checkSelectors(t, c, cookie, cs.SiteCode, sample, cms.Detail)
			}
			continue
		}
		for _, tg := range cs.Targets {
			configured[tg.TargetCode] = true
			checkBinding(t, tg.TargetCode, tg.DeptBinding, tg.LocalDeptID, depts)
			r := fetchAs(t, c, cookie, tg.EntryURL)
			if r.status != http.StatusOK {
				t.Errorf("%s: entry_url %s answers %d", tg.TargetCode, tg.EntryURL, r.status)
				continue
			}
			if cs.Template.List["format"] != "json" {
				doc := parse(t, s, r.body)
				items := doc.Find(cs.Template.List["item"].(string))
				if items.Length() == 0 {
					t.Errorf("%s: list item selector matches nothing on %s", tg.TargetCode, tg.EntryURL)
				}
				if link, _ := items.First().Find("a").Attr("href"); link == "" {
					t.Errorf("%s: list item has no link", tg.TargetCode)
				}
			}
			// The sample must exist for any seed (it is pinned).
			if r := fetchAs(t, c, cookie, tg.SampleArticleURL); r.status != http.StatusOK {
				t.Errorf("%s: sample_article_url answers %d", tg.TargetCode, r.status)
			}
			checkSelectors(t, c, cookie, cs.SiteCode, tg.SampleArticleURL, cs.Template.Detail)
		}
	}
	// Every column the world says is configured really is, and vice versa.
	for _, s := range w.sites {
		for _, col := range s.columns {
			if col.TargetCode != "" && !configured[col.TargetCode] {
				t.Errorf("column %s of %s has target %s missing from config", col.ID, s.Code, col.TargetCode)
			}
			delete(configured, col.TargetCode)
		}
	}
	for code := range configured {
		t.Errorf("configured target %s is no column of the world", code)
	}
}

func samplesOf(w *World, s *site) []string {
	var out []string
	for _, col := range s.columns {
		if len(col.articles) > 0 {
			out = append(out, "http://"+s.Host+col.articles[len(col.articles)-1].Path)
		}
	}
	return out
}

func checkBinding(t *testing.T, what, binding string, id int, depts map[string]bool) {
	t.Helper()
	switch {
	case binding == "mapped" && !depts[fmt.Sprint(id)]:
		t.Errorf("%s: local_dept_id %d not in departments.csv", what, id)
	case binding != "mapped" && id != 0:
		t.Errorf("%s: local_dept_id with binding %s", what, binding)
	case binding != "mapped" && binding != "city_level" && binding != "cross_dept" && binding != "external_ref":
		t.Errorf("%s: dept_binding %q", what, binding)
	}
}

func parse(t *testing.T, s *site, body []byte) *goquery.Document {
	t.Helper()
	if s.Kind == kindLianzhou {
		body, _ = simplifiedchinese.GB18030.NewDecoder().Bytes(body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// checkSelectors fetches a detail page and checks every selector of the
// detail block matches (attachments only when the article has some).
func checkSelectors(t *testing.T, c *http.Client, cookie, code, u string, detail map[string]any) {
	t.Helper()
	r := fetchAs(t, c, cookie, u)
	if r.status != http.StatusOK {
		t.Errorf("%s: %s answers %d", code, u, r.status)
		return
	}
	var s *site
	if code == "lianzhou" {
		s = &site{Kind: kindLianzhou}
	} else {
		s = &site{}
	}
	doc := parse(t, s, r.body)
	for key, v := range detail {
		sel, ok := v.(string)
		if !ok || key == "url_pattern" {
			continue
		}
		css, attr, hasAttr := strings.Cut(sel, "@")
		m := doc.Find(css)
		if key == "attachments" {
			continue // only some articles carry attachments; checked below
		}
		if m.Length() == 0 {
			t.Errorf("%s: detail %s selector %q matches nothing on %s", code, key, sel, u)
			continue
		}
		if hasAttr {
			if v, _ := m.First().Attr(attr); v == "" {
				t.Errorf("%s: detail %s selector %q has no %s", code, key, sel, attr)
			}
		} else if strings.TrimSpace(m.First().Text()) == "" {
			t.Errorf("%s: detail %s selector %q is empty", code, key, sel)
		}
	}
}

func TestConfigAttachmentSelectors(t *testing.T) {
	w := startWorld(t, Options{Seed: 11})
	c := client(w)
	cookie := clearance(t, w, c)
	sel := map[string]string{}
	for _, cs := range loadSites(t) {
		if a, ok := cs.Template.Detail["attachments"].(string); ok {
			sel[cs.SiteCode] = a
		}
	}
	var cms struct {
		Detail map[string]any `yaml:"detail"`
	}
	b, _ := os.ReadFile(filepath.Join(configDir(t), "cms", "gkmlpt.yaml"))
	_ = yaml.Unmarshal(b, &cms)
	for _, code := range []string{"qingyuan", "qingcheng", "yingde"} {
		sel[code] = cms.Detail["attachments"].(string)
	}
	seen := map[string]bool{}
	for _, a := range w.Truth() {
		if len(a.Attachments) == 0 || sel[a.SiteCode] == "" {
			continue
		}
		seen[a.SiteCode] = true
		doc := parse(t, w.byHost[a.Host], fetchAs(t, c, cookie, a.URL).body)
		if n := doc.Find(sel[a.SiteCode]).Length(); n != len(a.Attachments) {
			t.Errorf("%s: attachments selector matches %d links, truth has %d", a.URL, n, len(a.Attachments))
		}
	}
	if len(seen) < 3 {
		t.Errorf("attachments checked on only %d sites", len(seen))
	}
}
