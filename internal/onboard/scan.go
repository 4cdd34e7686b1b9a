package onboard

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"zhizhi/internal/adapter"
	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// Site is one matched site from step 2 on: what the scan found, the
// fields the person may edit before the drafts (SiteCode, SiteName,
// SiteRole, each Dept's binding) and the dept rows.
type Site struct {
	BaseURL   string `json:"base_url"`
	AdapterID string `json:"adapter_id"`
	SiteCode  string `json:"site_code"`
	SiteName  string `json:"site_name"`
	SiteRole  string `json:"site_role"`
	// Params are the adapter parameters the index pages declared (sid).
	Params  map[string]string `json:"params,omitempty"`
	Browser bool              `json:"browser,omitempty"`
	// ConfiguredAs: see Detection; such a site gets no draft.
	ConfiguredAs string `json:"configured_as,omitempty"`
	Depts        []Dept `json:"depts"`
	// Problem says why the site could not be scanned (no dept links,
	// an adapter without a dept index page).
	Problem string `json:"problem,omitempty"`
}

// Dept is one dept_path row.
type Dept struct {
	DeptPath    string `json:"dept_path"`
	DisplayName string `json:"display_name"`
	// ColumnCount estimates the columns one could subscribe: the leaves
	// of the classify tree that hold posts of their own (jump-only
	// nodes, which point elsewhere, are not counted).
	ColumnCount int      `json:"column_count"`
	Columns     []Column `json:"columns,omitempty"`
	// Suggested is the wizard's suggestion; Binding and LocalDeptID are
	// the choice, which starts as the suggestion and is the person's to
	// change.
	Suggested   Suggestion `json:"suggested"`
	Binding     string     `json:"binding"`
	LocalDeptID *int64     `json:"local_dept_id,omitempty"`
	// Problem says why the dept's index could not be read.
	Problem string `json:"problem,omitempty"`
}

// Column is one subscribable column of a dept's classify tree.
type Column struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path"` // names from the root, joined by ｜
	PostCount int    `json:"post_count"`
}

// Scan reads the dept sub-sites of every matched detection, in order:
// each dept's index page gives its display name, its classify tree and
// the adapter parameters (the gkmlpt sid). Detections that did not match
// are left out. Sites are scanned a few at a time; depts of one site one
// after another, paced by the fetcher.
func (w *Wizard) Scan(ctx context.Context, ds []Detection) []Site {
	var matched []Detection
	for _, d := range ds {
		if d.Matched() {
			matched = append(matched, d)
		}
	}
	out := make([]Site, len(matched))
	parallel(len(matched), func(i int) {
		out[i] = w.scan(ctx, matched[i])
		s := out[i]
		w.report(Event{BaseURL: s.BaseURL, Site: &s})
	})
	w.AssignCodes(out)
	return out
}

func (w *Wizard) scan(ctx context.Context, d Detection) Site {
	s := Site{
		BaseURL: d.BaseURL, AdapterID: d.AdapterID, SiteName: d.SiteName, SiteRole: model.RoleCountyLocal,
		Browser: d.Browser, ConfiguredAs: d.ConfiguredAs, Depts: []Dept{},
	}
	a := w.Bundle.CMS[d.AdapterID]
	switch {
	case a == nil:
		s.Problem = fmt.Sprintf("适配器 %s 不在当前配置中", d.AdapterID)
		return s
	case indexPathRe(a) == nil:
		s.Problem = fmt.Sprintf("适配器 %s 没有部门目录页（index.url 需为 {base_url}/{dept_path}/…），无法扫描部门", a.AdapterID)
		return s
	case len(d.DeptLinks) == 0:
		s.Problem = "首页没有链接到任何部门子站（" + strings.ReplaceAll(a.Index.URL, "{base_url}", d.BaseURL) + "）"
		return s
	}
	sids := map[string]int{}
	for _, l := range d.DeptLinks {
		dept, sid := w.scanDept(ctx, a, d.BaseURL, l)
		reported := dept
		w.report(Event{BaseURL: d.BaseURL, Dept: &reported})
		if sid != "" {
			sids[sid]++
		}
		s.Depts = append(s.Depts, dept)
	}
	// Every dept of a gkmlpt site declares the site's one sid; should
	// they differ, the most common one is the site's.
	best := ""
	for sid, n := range sids {
		if best == "" || n > sids[best] || n == sids[best] && sid < best {
			best = sid
		}
	}
	if best != "" {
		s.Params = map[string]string{"sid": best}
	}
	return s
}

func (w *Wizard) scanDept(ctx context.Context, a *config.Adapter, base string, l DeptLink) (Dept, string) {
	d := Dept{DeptPath: l.DeptPath, Binding: model.BindingPending, Columns: []Column{}}
	u := config.ExpandURL(a.Index.URL, map[string]string{"base_url": base, "dept_path": l.DeptPath})
	d.DisplayName = trimDisclosure(l.Text)
	resp, err := w.get(ctx, u, model.PurposeIndex)
	if err != nil {
		d.Problem = fetch.Explain("", err)
		return d, ""
	}
	if resp.Status >= 400 {
		d.Problem = fetch.ExplainStatus("部门目录页", resp.Status)
		return d, ""
	}
	html, _, err := resp.HTML()
	if err != nil {
		d.Problem = "部门目录页无法解码：" + err.Error()
		return d, ""
	}
	idx, err := adapter.ParseGkmlptIndex(html, a.Index.ConfigVar)
	if err != nil {
		d.Problem = "部门目录页读不出栏目树：" + err.Error()
		return d, ""
	}
	if name := configName(html, a.Index.ConfigVar); name != "" {
		d.DisplayName = name
	}
	parents := map[string]bool{}
	for _, c := range idx.Columns {
		parents[c.ParentID] = true
	}
	for _, c := range idx.Columns {
		if parents[c.ID] || c.JumpURL != "" && c.PostCount == 0 {
			continue
		}
		d.Columns = append(d.Columns, Column{ID: c.ID, Name: c.Name, Path: c.Path, PostCount: c.PostCount})
	}
	d.ColumnCount = len(d.Columns)
	return d, idx.SID
}

// configName is the SITE_NAME the index page's config object declares:
// the dept's own name on a gkmlpt dept sub-site.
func configName(html []byte, configVar string) string {
	if configVar == "" {
		configVar = "window._CONFIG"
	}
	v, err := adapter.FindJSAssignment(string(html), configVar)
	if err != nil {
		return ""
	}
	m, _ := v.(map[string]any)
	name, _ := m["SITE_NAME"].(string)
	return extract.CleanText(name)
}

// siteCodeRe is what lint accepts as a site_code.
var siteCodeRe = regexp.MustCompile(`^[a-z0-9_]{2,50}$`)

// AssignCodes gives each site a site_code from its host (www.qingcheng.gov.cn
// → qingcheng), unique among the sites and the configured ones. Scan does
// it for the sites it scanned; a batch scanned in parts is given its codes
// again as a whole, in order, with the same result as one Scan.
func (w *Wizard) AssignCodes(sites []Site) {
	taken := map[string]bool{}
	for _, s := range w.Bundle.Sites {
		taken[s.SiteCode] = true
	}
	for i := range sites {
		code := codeFromHost(hostOf(sites[i].BaseURL))
		if sites[i].ConfiguredAs != "" {
			code = sites[i].ConfiguredAs
		} else {
			for n := 2; taken[code]; n++ {
				code = fmt.Sprintf("%s_%d", strings.TrimRight(code[:min(len(code), 45)], "_"), n)
			}
		}
		taken[code] = true
		sites[i].SiteCode = code
	}
}

func codeFromHost(host string) string {
	host, _, _ = strings.Cut(host, ":")
	labels := strings.Split(host, ".")
	for len(labels) > 1 && (labels[0] == "www" || labels[0] == "gov" || labels[0] == "") {
		labels = labels[1:]
	}
	code := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, strings.ToLower(labels[0]))
	if len(code) > 50 {
		code = code[:50]
	}
	if !siteCodeRe.MatchString(code) {
		code = "site_" + code
	}
	return code
}
