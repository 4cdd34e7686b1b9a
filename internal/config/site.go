package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"zhizhi/internal/model"
)

// SiteFile is one config/sites/*.yaml: either a template site (Template and
// Targets) or a CMS-adapter site (CMSAdapter, AdapterParams and Depts).
type SiteFile struct {
	Path    string // as found under the config dir given to Load
	RelPath string // relative to the config dir's parent, e.g. config/sites/gd_ref.yaml (crawl_site.yaml_path)

	SiteCode               string
	SiteName               string
	BaseURL                string
	SiteRole               string
	Access                 string // full | summary; default summary
	FetchStrategy          string // direct | browser; empty means the adapter's default, else direct
	StrategyOverrideReason string
	RespectRobots          bool
	Owned                  bool
	Enabled                bool
	Remark                 string
	RateIntervalSec        int    // rate.interval_sec; 0 means the default spacing
	AttachmentOCR          bool   // attachments.ocr: read scanned pages of PDF attachments with OCR
	CorpusRights           string // corpus.rights: public_info | reference | unknown (the default)

	CMSAdapter    string
	AdapterParams map[string]any // scalar values as written
	Depts         []*Dept

	Template    *Template
	TargetDecls []*TargetDecl

	Pos Positions // where each top-level key was written
}

// Dept is one depts[] entry of a CMS-adapter site: a CMS dept_path bound to
// a local department.
type Dept struct {
	DeptPath        string
	DeptBinding     string
	LocalDeptID     *int64
	DeptDisplayName string
	Enabled         bool
	Columns         []*Column
	Pos             Positions
	At              Pos // where the entry starts
}

// Column is one columns[] entry of a dept: one crawl target.
type Column struct {
	ColumnID            string
	Name                string
	ChannelPath         string
	Category            string
	Subcategory         string
	ExpectedCadenceDays int
	Enabled             bool
	TargetCode          string // as written; empty means derived
	Pos                 Positions
	At                  Pos
}

// TargetDecl is one targets[] entry of a template site.
type TargetDecl struct {
	TargetCode          string
	TargetName          string
	EntryURL            string
	SampleArticleURL    string
	DeptBinding         string
	LocalDeptID         *int64
	ChannelName         string
	ChannelPath         string
	ContentCategory     string
	ContentSubcategory  string
	ExpectedCadenceDays int
	Enabled             bool
	ParserOverride      *Template
	Pos                 Positions
	At                  Pos
}

// DefaultCadenceDays is expected_cadence_days when a file does not say
// .
const DefaultCadenceDays = 30

// Fetch strategies as written in configuration; stored as the seed's
// httpx/playwright (model.StrategyDirect/StrategyBrowser).
const (
	FetchDirect  = "direct"
	FetchBrowser = "browser"
)

var (
	siteKeys = []string{"site_code", "site_name", "base_url", "site_role", "access", "fetch_strategy",
		"strategy_override_reason", "respect_robots", "owned", "enabled", "remark", "rate", "attachments", "corpus",
		"cms_adapter", "adapter_params", "depts", "template", "targets"}
	siteAliases = map[string]string{"site_id": "site_code", "strategy": "fetch_strategy"}
	rateKeys    = []string{"interval_sec"}
	attachKeys  = []string{"ocr"}
	corpusKeys  = []string{"rights"}
	deptKeys    = []string{"dept_path", "dept_binding", "local_dept_id", "dept_display_name", "enabled", "columns"}
	columnKeys  = []string{"column_id", "name", "channel_path", "category", "subcategory",
		"expected_cadence_days", "enabled", "target_code"}
	targetKeys = []string{"target_code", "target_name", "entry_url", "sample_article_url", "dept_binding",
		"local_dept_id", "channel_name", "channel_path", "content_category", "content_subcategory",
		"expected_cadence_days", "enabled", "parser_override"}

	fileBindings   = []string{model.BindingMapped, model.BindingCityLevel, model.BindingCrossDept, model.BindingExternalRef}
	strategyValues = []string{FetchDirect, FetchBrowser, model.StrategyDirect, model.StrategyBrowser}

	siteCodeRe   = regexp.MustCompile(`^[a-z0-9_]{2,50}$`)
	targetCodeRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	deptPathRe   = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)
)

// normalizeStrategy maps the seed's spellings onto direct/browser.
func normalizeStrategy(s string) string {
	switch s {
	case model.StrategyDirect:
		return FetchDirect
	case model.StrategyBrowser:
		return FetchBrowser
	}
	return s
}

// readSite decodes one site file. Checks that need other files (adapters,
// departments, duplicates across files) are done by Load.
func (r *reporter) readSite(path string, root *yaml.Node) *SiteFile {
	m := r.readMapping(path, root, "site", siteKeys, siteAliases)
	s := &SiteFile{Path: path, Pos: m.positions()}
	s.SiteCode = m.str("site_code", true, "gd_ref")
	if s.SiteCode != "" && !siteCodeRe.MatchString(s.SiteCode) {
		r.errorf(m.valPos("site_code"), "use 2–50 lower-case letters, digits or _", "site_code %q is not a valid code", s.SiteCode)
	}
	s.SiteName = m.str("site_name", true, "广东省人民政府门户网站")
	s.BaseURL = m.str("base_url", true, "https://www.example.gov.test")
	if s.BaseURL != "" {
		r.checkBaseURL(m, s.BaseURL)
	}
	s.SiteRole = m.str("site_role", true, strings.Join(model.SiteRoles, " | "))
	m.oneOf("site_role", s.SiteRole, model.SiteRoles)
	s.Access = m.str("access", false, "full")
	m.oneOf("access", s.Access, []string{model.AccessFull, model.AccessSummary})
	if s.Access == "" {
		s.Access = model.AccessSummary
	}
	s.FetchStrategy = m.str("fetch_strategy", false, "direct")
	if m.oneOf("fetch_strategy", s.FetchStrategy, strategyValues) {
		s.FetchStrategy = normalizeStrategy(s.FetchStrategy)
	}
	s.StrategyOverrideReason = m.str("strategy_override_reason", false, "")
	s.RespectRobots = m.boolean("respect_robots", true)
	s.Owned = m.boolean("owned", false)
	if s.Owned {
		r.checkOwned(m, s.BaseURL)
	}
	s.Enabled = m.boolean("enabled", true)
	s.Remark = m.str("remark", false, "")
	if m.has("rate") {
		rm := r.readMapping(path, m.vals["rate"], "rate", rateKeys, nil)
		if v, ok := rm.integer("interval_sec"); ok {
			if v < 1 {
				r.errorf(rm.valPos("interval_sec"), "use a positive number of seconds", "rate.interval_sec %d must be positive", v)
			} else {
				s.RateIntervalSec = int(v)
			}
		}
	}
	if m.has("attachments") {
		am := r.readMapping(path, m.vals["attachments"], "attachments", attachKeys, nil)
		s.AttachmentOCR = am.boolean("ocr", false)
	}
	s.CorpusRights = model.RightsUnknown
	if m.has("corpus") {
		cm := r.readMapping(path, m.vals["corpus"], "corpus", corpusKeys, nil)
		if v := cm.str("rights", false, "public_info"); v != "" {
			if cm.oneOf("rights", v, model.RightsProfiles) {
				s.CorpusRights = v
			}
		}
	}

	s.CMSAdapter = m.str("cms_adapter", false, "gkmlpt")
	if s.CMSAdapter != "" {
		r.readAdapterSite(m, s)
	} else {
		r.readTemplateSite(m, s)
	}
	return s
}

func (r *reporter) readAdapterSite(m *mapping, s *SiteFile) {
	for _, key := range []string{"template", "targets"} {
		if m.has(key) {
			r.errorf(m.keyPos(key), "remove it: selectors and URLs come from config/cms/"+s.CMSAdapter+".yaml; declare columns under depts[]",
				"%s is not allowed on a site with cms_adapter", key)
		}
	}
	if m.has("adapter_params") {
		s.AdapterParams = r.readParams(m)
	}
	if !m.has("depts") {
		r.warnf(m.start(), "add depts[] with their columns, or remove the file", "site %s declares no depts, so nothing will be crawled", s.SiteCode)
	}
	seen := map[string]Pos{}
	for i, n := range m.seq("depts") {
		d := r.readDept(m.file, n, fmt.Sprintf("depts[%d]", i))
		if d.DeptPath != "" {
			if first, dup := seen[d.DeptPath]; dup {
				r.errorf(d.Pos["dept_path"], fmt.Sprintf("merge the two entries (the first is at line %d)", first.Line),
					"dept_path %q appears twice in site %s", d.DeptPath, s.SiteCode)
			} else {
				seen[d.DeptPath] = d.Pos["dept_path"]
			}
		}
		s.Depts = append(s.Depts, d)
	}
	if m.has("depts") && len(s.Depts) == 0 {
		r.warnf(m.keyPos("depts"), "add a dept with columns, or remove the file", "site %s has an empty depts list, so nothing will be crawled", s.SiteCode)
	}
}

// readParams reads adapter_params: free-form keys (the adapter's
// site_template says which are required) with scalar values.
func (r *reporter) readParams(m *mapping) map[string]any {
	v := m.vals["adapter_params"]
	params := map[string]any{}
	if v.Kind != yaml.MappingNode {
		r.errorf(m.pos(v), "write it as a mapping, e.g. `adapter_params: {sid: \"763042\"}`", "adapter_params must be a mapping, got %s", kindName(v))
		return params
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := resolve(v.Content[i]), resolve(v.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			r.errorf(m.pos(k), "use plain names as keys", "a key of adapter_params is %s", kindName(k))
			continue
		}
		if _, dup := params[k.Value]; dup {
			r.errorf(m.pos(k), "keep one", "adapter_params key %s repeated", k.Value)
			continue
		}
		if val.Kind != yaml.ScalarNode || val.ShortTag() == "!!null" {
			r.errorf(m.pos(val), "give it a value, e.g. "+k.Value+": \"763042\"", "adapter_params %s must be a single value, got %s", k.Value, kindName(val))
			continue
		}
		params[k.Value] = scalarValue(val)
	}
	return params
}

func (r *reporter) readDept(file string, n *yaml.Node, what string) *Dept {
	m := r.readMapping(file, n, what, deptKeys, nil)
	d := &Dept{Pos: m.positions(), At: m.start()}
	d.DeptPath = m.str("dept_path", true, "qyfgw")
	if d.DeptPath != "" {
		m.what = "dept " + d.DeptPath
		if len(d.DeptPath) > 100 || !deptPathRe.MatchString(d.DeptPath) {
			r.errorf(m.valPos("dept_path"), "use the path segment of {base_url}/{dept_path}/gkmlpt/, e.g. qyfgw",
				"dept_path %q is not a valid path", d.DeptPath)
		}
	}
	d.DeptBinding, d.LocalDeptID = r.readBinding(m)
	d.DeptDisplayName = m.str("dept_display_name", false, "")
	d.Enabled = m.boolean("enabled", true)
	if !m.has("columns") {
		r.warnf(m.start(), "add columns[] to crawl this dept", "%s has no columns, so nothing will be crawled there", m.what)
	}
	seen := map[string]Pos{}
	for i, cn := range m.seq("columns") {
		c := r.readColumn(file, cn, fmt.Sprintf("%s columns[%d]", m.what, i))
		if c.ColumnID != "" {
			if first, dup := seen[c.ColumnID]; dup {
				r.errorf(c.Pos["column_id"], fmt.Sprintf("keep one entry (the first is at line %d)", first.Line),
					"column_id %q appears twice in %s", c.ColumnID, m.what)
			} else {
				seen[c.ColumnID] = c.Pos["column_id"]
			}
		}
		d.Columns = append(d.Columns, c)
	}
	if m.has("columns") && len(d.Columns) == 0 {
		r.warnf(m.keyPos("columns"), "add a column, or remove the dept", "%s has an empty columns list, so nothing will be crawled there", m.what)
	}
	return d
}

// readBinding reads dept_binding and local_dept_id with the rules of
// the site file: the binding is required, pending is refused, and
// local_dept_id is given if and only if the binding is mapped.
func (r *reporter) readBinding(m *mapping) (string, *int64) {
	binding := m.str("dept_binding", true, strings.Join(fileBindings, " | "))
	valid := true
	if binding == model.BindingPending {
		r.errorf(m.valPos("dept_binding"), "choose mapped (with local_dept_id), city_level, cross_dept or external_ref",
			"dept_binding pending is a runtime state and cannot be written in a file")
		valid = false
	} else {
		valid = m.oneOf("dept_binding", binding, fileBindings)
	}
	var id *int64
	if m.has("local_dept_id") {
		if v, ok := m.integer("local_dept_id"); ok {
			if v <= 0 {
				r.errorf(m.valPos("local_dept_id"), "use the dept_id of the department in config/departments.csv", "local_dept_id %d must be positive", v)
			} else {
				id = &v
			}
		}
	}
	switch {
	case binding == model.BindingMapped && !m.has("local_dept_id"):
		r.errorf(m.keyPos("dept_binding"), "add `local_dept_id: <dept_id>` from config/departments.csv",
			"dept_binding mapped needs local_dept_id")
	case valid && binding != "" && binding != model.BindingMapped && m.has("local_dept_id"):
		r.errorf(m.keyPos("local_dept_id"), "remove local_dept_id, or set dept_binding: mapped",
			"local_dept_id is set but dept_binding is %s", binding)
		id = nil
	}
	return binding, id
}

func (r *reporter) readColumn(file string, n *yaml.Node, what string) *Column {
	m := r.readMapping(file, n, what, columnKeys, nil)
	c := &Column{Pos: m.positions(), At: m.start()}
	c.ColumnID = m.str("column_id", true, `"2849"`)
	c.Name = m.str("name", true, "规章文件")
	c.ChannelPath = m.str("channel_path", false, "信息公开｜规章文件")
	c.Category = m.str("category", false, "法规文件")
	c.Subcategory = m.str("subcategory", false, "")
	c.ExpectedCadenceDays = r.readCadence(m)
	c.Enabled = m.boolean("enabled", true)
	c.TargetCode = m.str("target_code", false, "")
	if c.TargetCode != "" && !targetCodeRe.MatchString(c.TargetCode) {
		r.errorf(m.valPos("target_code"), "use up to 100 letters, digits, _ . or -", "target_code %q is not a valid code", c.TargetCode)
	}
	return c
}

func (r *reporter) readCadence(m *mapping) int {
	if !m.has("expected_cadence_days") {
		return DefaultCadenceDays
	}
	v, ok := m.integer("expected_cadence_days")
	if !ok {
		return DefaultCadenceDays
	}
	if v < 1 || v > 3660 {
		r.errorf(m.valPos("expected_cadence_days"), "use a positive whole number of days, e.g. 7 or 30",
			"expected_cadence_days %d is not a positive number of days", v)
		return DefaultCadenceDays
	}
	return int(v)
}

func (r *reporter) readTemplateSite(m *mapping, s *SiteFile) {
	for _, key := range []string{"depts", "adapter_params"} {
		if m.has(key) {
			r.errorf(m.keyPos(key), "add `cms_adapter: <adapter_id>` to use depts/adapter_params, or declare targets[] with a template",
				"%s is only allowed on a site with cms_adapter", key)
		}
	}
	if m.has("template") {
		s.Template = r.readTemplate(m.file, m.vals["template"], "template", false)
	} else {
		m.missing("template", "{list: {…}, detail: {…}} (or set cms_adapter)")
	}
	if !m.has("targets") {
		r.warnf(m.start(), "add targets[], or remove the file", "site %s declares no targets, so nothing will be crawled", s.SiteCode)
	}
	for i, n := range m.seq("targets") {
		s.TargetDecls = append(s.TargetDecls, r.readTarget(m.file, n, fmt.Sprintf("targets[%d]", i), s))
	}
	if m.has("targets") && len(s.TargetDecls) == 0 {
		r.warnf(m.keyPos("targets"), "add a target, or remove the file", "site %s has an empty targets list, so nothing will be crawled", s.SiteCode)
	}
}

func (r *reporter) readTarget(file string, n *yaml.Node, what string, s *SiteFile) *TargetDecl {
	m := r.readMapping(file, n, what, targetKeys, nil)
	t := &TargetDecl{Pos: m.positions(), At: m.start()}
	t.TargetCode = m.str("target_code", true, "gd_zcwj")
	if t.TargetCode != "" {
		m.what = "target " + t.TargetCode
		if !targetCodeRe.MatchString(t.TargetCode) {
			r.errorf(m.valPos("target_code"), "use up to 100 letters, digits, _ . or -", "target_code %q is not a valid code", t.TargetCode)
		}
	}
	t.TargetName = m.str("target_name", true, "广东省政府｜政策文件")
	t.EntryURL = m.str("entry_url", true, s.BaseURL+"/zwgk/zcwj/")
	if t.EntryURL != "" {
		if u := r.checkAbsURL(m, "entry_url", t.EntryURL); u != nil && s.BaseURL != "" {
			if base, err := url.Parse(s.BaseURL); err == nil && base.Host != "" && !strings.EqualFold(base.Host, u.Host) {
				r.errorf(m.valPos("entry_url"), "point entry_url at a page of "+base.Host+", or move the target to a site file for "+u.Host,
					"entry_url host %s differs from base_url host %s", u.Host, base.Host)
			}
		}
	}
	t.SampleArticleURL = m.str("sample_article_url", false, "")
	if t.SampleArticleURL != "" {
		r.checkAbsURL(m, "sample_article_url", t.SampleArticleURL)
	}
	t.DeptBinding, t.LocalDeptID = r.readBinding(m)
	t.ChannelName = m.str("channel_name", false, "")
	t.ChannelPath = m.str("channel_path", false, "")
	t.ContentCategory = m.str("content_category", false, "")
	t.ContentSubcategory = m.str("content_subcategory", false, "")
	t.ExpectedCadenceDays = r.readCadence(m)
	t.Enabled = m.boolean("enabled", true)
	if m.has("parser_override") {
		t.ParserOverride = r.readTemplate(file, m.vals["parser_override"], m.what+" parser_override", true)
	}
	return t
}

// checkAbsURL requires an absolute http(s) URL with a host.
func (r *reporter) checkAbsURL(m *mapping, key, raw string) *url.URL {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		r.errorf(m.valPos(key), "write a full URL such as https://www.example.gov.test/path/", "%s %q is not a URL: %v", key, raw, err)
		return nil
	case u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https":
		r.errorf(m.valPos(key), "use an http:// or https:// URL", "%s %q uses scheme %s", key, raw, u.Scheme)
		return nil
	case u.Scheme == "" || u.Host == "":
		r.errorf(m.valPos(key), "write the full URL with http:// or https:// and the host", "%s %q is relative", key, raw)
		return nil
	}
	return u
}

func (r *reporter) checkBaseURL(m *mapping, raw string) {
	u := r.checkAbsURL(m, "base_url", raw)
	if u == nil {
		return
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		r.errorf(m.valPos("base_url"), "keep only scheme and host (e.g. "+u.Scheme+"://"+u.Host+"); put paths in entry_url or dept_path",
			"base_url %q has a path, query or fragment", raw)
	}
}

// checkOwned refuses owned: true for a site whose host the resolve map does
// not pin to loopback: owned loosens the politeness limits, which is only
// ever right for a site running on this machine.
func (r *reporter) checkOwned(m *mapping, baseURL string) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return // base_url has its own error
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ap, err := netip.ParseAddrPort(r.resolve[host]); err == nil && ap.Addr().Unmap().IsLoopback() {
		return
	}
	r.errorf(m.valPos("owned"), "set owned: false; owned is only for a site running on this machine (the simulated web), named in ZHIZHI_RESOLVE with a 127.0.0.1 address",
		"owned: true for %s, which ZHIZHI_RESOLVE does not map to a loopback address", host)
}

// scalarValue converts an adapter parameter to a JSON-friendly value as
// written: integers stay numbers, everything else is text.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int":
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return v
		}
	case "!!bool":
		if v, err := strconv.ParseBool(n.Value); err == nil {
			return v
		}
	}
	return n.Value
}
