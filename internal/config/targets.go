package config

import (
	"encoding/json"
	"strings"

	"zhizhi/internal/model"
)

// TargetSpec is one crawl target as the files declare it, whatever the kind
// of site: a template site's targets[] entry, or one column of a gkmlpt
// site's depts[].columns[].
type TargetSpec struct {
	Site   *SiteFile
	Dept   *Dept       // nil for template sites
	Column *Column     // nil for template sites
	Decl   *TargetDecl // nil for CMS-adapter sites

	TargetCode          string
	TargetName          string
	EntryURL            string
	SampleArticleURL    string
	DeptBinding         string
	LocalDeptID         *int64
	ColumnID            string
	ChannelName         string
	ChannelPath         string
	ContentCategory     string
	ContentSubcategory  string
	ExpectedCadenceDays int
	Enabled             bool
	ParserOverride      *Template
	Pos                 Pos // where the entry was declared
}

// DefaultTargetCode is the target_code of a gkmlpt column that does not set
// one: <site_code>_<dept_path>_<column_id>, with any '/' of a nested
// dept_path written as '_'.
func DefaultTargetCode(siteCode, deptPath, columnID string) string {
	return siteCode + "_" + strings.ReplaceAll(deptPath, "/", "_") + "_" + columnID
}

// Targets flattens the site's targets: one per template target, or one per
// column of every dept of a CMS-adapter site.
func (s *SiteFile) Targets() []TargetSpec {
	var out []TargetSpec
	for _, t := range s.TargetDecls {
		out = append(out, TargetSpec{
			Site: s, Decl: t,
			TargetCode:          t.TargetCode,
			TargetName:          t.TargetName,
			EntryURL:            t.EntryURL,
			SampleArticleURL:    t.SampleArticleURL,
			DeptBinding:         t.DeptBinding,
			LocalDeptID:         t.LocalDeptID,
			ChannelName:         t.ChannelName,
			ChannelPath:         t.ChannelPath,
			ContentCategory:     t.ContentCategory,
			ContentSubcategory:  t.ContentSubcategory,
			ExpectedCadenceDays: t.ExpectedCadenceDays,
			Enabled:             t.Enabled,
			ParserOverride:      t.ParserOverride,
			Pos:                 firstPos(t.Pos["target_code"], t.At),
		})
	}
	for _, d := range s.Depts {
		owner := d.DeptDisplayName
		if owner == "" {
			owner = s.SiteName
		}
		for _, c := range d.Columns {
			code := c.TargetCode
			if code == "" && s.SiteCode != "" && d.DeptPath != "" && c.ColumnID != "" {
				code = DefaultTargetCode(s.SiteCode, d.DeptPath, c.ColumnID)
			}
			path := c.ChannelPath
			if path == "" && c.Name != "" {
				path = "信息公开｜" + c.Name
			}
			out = append(out, TargetSpec{
				Site: s, Dept: d, Column: c,
				TargetCode:          code,
				TargetName:          owner + "｜" + c.Name,
				EntryURL:            s.columnEntryURL(d, c),
				DeptBinding:         d.DeptBinding,
				LocalDeptID:         d.LocalDeptID,
				ColumnID:            c.ColumnID,
				ChannelName:         c.Name,
				ChannelPath:         path,
				ContentCategory:     c.Category,
				ContentSubcategory:  c.Subcategory,
				ExpectedCadenceDays: c.ExpectedCadenceDays,
				Enabled:             c.Enabled,
				Pos:                 firstPos(c.Pos["target_code"], c.Pos["column_id"], c.At),
			})
		}
	}
	return out
}

// columnEntryURL is the page where a person sees a gkmlpt column: the dept's
// index page with the column id as fragment, as the CMS front end routes it.
// Crawling uses the adapter's list API, not this URL.
func (s *SiteFile) columnEntryURL(d *Dept, c *Column) string {
	if s.BaseURL == "" || d.DeptPath == "" {
		return ""
	}
	return strings.TrimRight(s.BaseURL, "/") + "/" + d.DeptPath + "/gkmlpt/index#" + c.ColumnID
}

func firstPos(ps ...Pos) Pos {
	for _, p := range ps {
		if p.Line != 0 {
			return p
		}
	}
	if len(ps) > 0 {
		return ps[len(ps)-1]
	}
	return Pos{}
}

// EffectiveTemplate is the parser a template target uses: the site's
// template with the target's parser_override merged over it key by key
// . It is nil for a CMS-adapter site's target, whose parser
// is the adapter's.
func EffectiveTemplate(site *SiteFile, target *TargetSpec) *Template {
	var override *Template
	if target != nil {
		override = target.ParserOverride
	}
	if site == nil || site.Template == nil {
		if override == nil {
			return nil
		}
		return (*Template)(nil).Merge(override)
	}
	return site.Template.Merge(override)
}

// ExpandURL fills {name} placeholders of an adapter URL template from vars;
// unknown placeholders are left as written.
func ExpandURL(tmpl string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			break
		}
		name := tmpl[i+1 : i+j]
		b.WriteString(tmpl[:i])
		if v, ok := vars[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(tmpl[i : i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
	b.WriteString(tmpl)
	return b.String()
}

// storedStrategy maps a configured strategy onto the stored values.
func storedStrategy(s string) string {
	if normalizeStrategy(s) == FetchBrowser {
		return model.StrategyBrowser
	}
	return model.StrategyDirect
}

// SiteModel converts a site file to its crawl_site row (ID unset). A
// template site records its file in yaml_path; a CMS-adapter site records
// cms_adapter and adapter_params instead (the seed's XOR).
func (b *Bundle) SiteModel(s *SiteFile) *model.Site {
	strategy := s.FetchStrategy
	if strategy == "" && s.CMSAdapter != "" {
		if a := b.CMS[s.CMSAdapter]; a != nil {
			strategy = a.DefaultStrategy
		}
	}
	m := &model.Site{
		SiteCode:               s.SiteCode,
		SiteName:               s.SiteName,
		BaseURL:                s.BaseURL,
		SiteRole:               s.SiteRole,
		DefaultFetchStrategy:   storedStrategy(strategy),
		StrategyOverrideReason: s.StrategyOverrideReason,
		RespectRobots:          s.RespectRobots,
		Access:                 s.Access,
		Owned:                  s.Owned,
		Enabled:                s.Enabled,
		Remark:                 s.Remark,
		AttachmentOCR:          s.AttachmentOCR,
		CorpusRights:           s.CorpusRights,
	}
	if s.CMSAdapter != "" {
		m.CMSAdapter = s.CMSAdapter
		params := s.AdapterParams
		if params == nil {
			params = map[string]any{}
		}
		// encoding/json sorts map keys, so the stored JSON is stable and a
		// second sync sees no change.
		m.AdapterParams, _ = json.Marshal(params)
	} else {
		m.YAMLPath = s.RelPath
	}
	return m
}

// DepartmentModel converts a dept to its site_department row (ID and SiteID
// unset). detect_status starts pending; it is runtime state the sync never
// overwrites on an existing row.
func (d *Dept) DepartmentModel() *model.SiteDepartment {
	return &model.SiteDepartment{
		DeptPath:        d.DeptPath,
		LocalDeptID:     d.LocalDeptID,
		DeptBinding:     d.DeptBinding,
		DeptDisplayName: d.DeptDisplayName,
		DetectStatus:    model.DetectPending,
		Enabled:         d.Enabled,
	}
}

// Model converts the target to its crawl_target row (ID, SiteID and
// SiteDepartmentID unset): source yaml, the cron from AssignCron, and
// dept_id derived by the binding rules (mapped → local_dept_id, else NULL).
func (t TargetSpec) Model() *model.Target {
	m := &model.Target{
		TargetCode:          t.TargetCode,
		TargetName:          t.TargetName,
		EntryURL:            t.EntryURL,
		SampleArticleURL:    t.SampleArticleURL,
		ColumnID:            t.ColumnID,
		ChannelName:         t.ChannelName,
		ChannelPath:         t.ChannelPath,
		ContentCategory:     t.ContentCategory,
		ContentSubcategory:  t.ContentSubcategory,
		ScheduleCron:        AssignCron(t.TargetCode),
		ExpectedCadenceDays: t.ExpectedCadenceDays,
		Enabled:             t.Enabled,
		Source:              model.SourceYAML,
		DeptBinding:         t.DeptBinding,
	}
	if t.Site != nil {
		m.IntervalSec = t.Site.RateIntervalSec
	}
	if t.DeptBinding == model.BindingMapped && t.LocalDeptID != nil {
		id := *t.LocalDeptID
		m.DeptID = &id
	}
	if t.ParserOverride != nil {
		m.ParserOverride, _ = json.Marshal((*Template)(nil).Merge(t.ParserOverride))
	}
	return m
}
