package onboard

import (
	"archive/zip"
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
)

// RowProblem is why a site or one of its dept rows cannot be drafted yet.
// DeptPath is empty for a problem of the site itself.
type RowProblem struct {
	BaseURL  string `json:"base_url"`
	SiteCode string `json:"site_code"`
	DeptPath string `json:"dept_path,omitempty"`
	Problem  string `json:"problem"`
}

func (p RowProblem) String() string {
	if p.DeptPath == "" {
		return fmt.Sprintf("%s（%s）：%s", p.SiteCode, p.BaseURL, p.Problem)
	}
	return fmt.Sprintf("%s / %s：%s", p.SiteCode, p.DeptPath, p.Problem)
}

// fileBindings are the bindings a site file may hold; pending is a
// runtime state only.
var fileBindings = []string{model.BindingMapped, model.BindingCityLevel, model.BindingCrossDept, model.BindingExternalRef}

// Check returns every reason the sites cannot be drafted: a site scan
// that failed, an onboarded site, a bad or taken site_code, an unknown
// site_role, a dept whose index could not be read, a row still pending,
// a mapped row without an existing local department, a local department
// on a row that is not mapped. None means Drafts will succeed.
func (w *Wizard) Check(sites []Site, dir *Directory) []RowProblem {
	var out []RowProblem
	taken := map[string]string{} // site_code → base_url
	for _, s := range w.Bundle.Sites {
		taken[s.SiteCode] = s.BaseURL
	}
	if len(sites) == 0 {
		out = append(out, RowProblem{Problem: "没有可生成草稿的站点"})
	}
	for _, s := range sites {
		site := func(format string, args ...any) {
			out = append(out, RowProblem{BaseURL: s.BaseURL, SiteCode: s.SiteCode, Problem: fmt.Sprintf(format, args...)})
		}
		switch {
		case s.Problem != "":
			site("扫描未成功（%s），请移除该站点或重新扫描", s.Problem)
			continue
		case s.ConfiguredAs != "":
			site("该站点已接入（site_code %s），请在站点部门映射页维护，不再生成草稿", s.ConfiguredAs)
			continue
		case w.Bundle.CMS[s.AdapterID] == nil:
			site("适配器 %s 不在当前配置中", s.AdapterID)
		}
		if _, problem := normalizeBaseURL(s.BaseURL); problem != "" {
			site("base_url %q：%s", s.BaseURL, problem)
		}
		switch {
		case !siteCodeRe.MatchString(s.SiteCode):
			site("site_code %q 不合法：只能用 2–50 个小写字母、数字或下划线", s.SiteCode)
		case taken[s.SiteCode] != "":
			site("site_code %q 已被 %s 使用，请换一个", s.SiteCode, taken[s.SiteCode])
		default:
			taken[s.SiteCode] = s.BaseURL
		}
		if strings.TrimSpace(s.SiteName) == "" {
			site("请填写站点名称")
		}
		if !slices.Contains(model.SiteRoles, s.SiteRole) {
			site("站点角色 %q 不在可选值中（%s）", s.SiteRole, strings.Join(model.SiteRoles, "、"))
		}
		if a := w.Bundle.CMS[s.AdapterID]; a != nil {
			for _, p := range a.SiteTemplate.RequiredParams {
				if s.Params[p] == "" {
					site("适配器参数 %s 没有从部门目录页读到，请重新扫描", p)
				}
			}
		}
		if len(s.Depts) == 0 {
			site("没有部门可写入草稿")
		}
		seen := map[string]bool{}
		for _, d := range s.Depts {
			row := func(format string, args ...any) {
				out = append(out, RowProblem{BaseURL: s.BaseURL, SiteCode: s.SiteCode, DeptPath: d.DeptPath, Problem: fmt.Sprintf(format, args...)})
			}
			if seen[d.DeptPath] {
				row("dept_path 重复，请删除多余的一行")
			}
			seen[d.DeptPath] = true
			if !deptPathRe.MatchString(d.DeptPath) || len(d.DeptPath) > 100 {
				row("dept_path %q 不合法", d.DeptPath)
			}
			if d.Problem != "" {
				row("部门目录页未能读取（%s），请重新扫描或移除该行", d.Problem)
				continue
			}
			switch {
			case d.Binding == "" || d.Binding == model.BindingPending:
				row("绑定方式仍为待定（pending），请选择 mapped、city_level、cross_dept 或 external_ref")
			case !slices.Contains(fileBindings, d.Binding):
				row("绑定方式 %q 不在可选值中（mapped、city_level、cross_dept、external_ref）", d.Binding)
			case d.Binding == model.BindingMapped && d.LocalDeptID == nil:
				row("选择 mapped 时必须选一个本地部门")
			case d.Binding == model.BindingMapped:
				if _, ok := dir.Department(*d.LocalDeptID); !ok {
					row("本地部门 %d 不存在，请从本地部门中选择", *d.LocalDeptID)
				}
			case d.LocalDeptID != nil:
				row("只有 mapped 才挂本地部门；%s 请清空本地部门", d.Binding)
			}
		}
	}
	return out
}

// Pending lists the dept rows still pending, as site_code/dept_path: the
// rows the wizard will not continue with.
func Pending(sites []Site) []string {
	var out []string
	for _, s := range sites {
		for _, d := range s.Depts {
			if d.Problem == "" && (d.Binding == "" || d.Binding == model.BindingPending) {
				out = append(out, s.SiteCode+"/"+d.DeptPath)
			}
		}
	}
	return out
}

// Draft is one site file, ready for review; nothing is written anywhere.
type Draft struct {
	SiteCode string `json:"site_code"`
	BaseURL  string `json:"base_url"`
	// Name is the file's path inside a configuration directory:
	// sites/<site_code>.yaml.
	Name string `json:"name"`
	YAML string `json:"yaml"`
}

// Drafts renders one site file per site, in the format the configuration
// loader reads, depts[] written out with their binding and every column of
// their classify tree unsubscribed (enabled: false: subscribing is done
// per dept after onboarding). It refuses, with every problem Check finds,
// when any row is not ready, so a draft never holds a pending row.
func (w *Wizard) Drafts(sites []Site, dir *Directory) ([]Draft, []RowProblem) {
	if problems := w.Check(sites, dir); len(problems) > 0 {
		return nil, problems
	}
	out := make([]Draft, 0, len(sites))
	for _, s := range sites {
		body, err := w.render(s)
		if err != nil {
			return nil, []RowProblem{{BaseURL: s.BaseURL, SiteCode: s.SiteCode, Problem: "生成草稿失败：" + err.Error()}}
		}
		out = append(out, Draft{SiteCode: s.SiteCode, BaseURL: s.BaseURL, Name: config.SitesDir + "/" + s.SiteCode + ".yaml", YAML: body})
	}
	return out, nil
}

// The keys of a site file, in the order the bundled files write them.
type siteYAML struct {
	SiteCode               string            `yaml:"site_code"`
	SiteName               string            `yaml:"site_name"`
	BaseURL                string            `yaml:"base_url"`
	SiteRole               string            `yaml:"site_role"`
	CMSAdapter             string            `yaml:"cms_adapter"`
	Access                 string            `yaml:"access"`
	FetchStrategy          string            `yaml:"fetch_strategy,omitempty"`
	StrategyOverrideReason string            `yaml:"strategy_override_reason,omitempty"`
	RespectRobots          bool              `yaml:"respect_robots"`
	Owned                  bool              `yaml:"owned"`
	Enabled                bool              `yaml:"enabled"`
	Remark                 string            `yaml:"remark,omitempty"`
	AdapterParams          map[string]string `yaml:"adapter_params,omitempty"`
	Depts                  []deptYAML        `yaml:"depts"`
}

type deptYAML struct {
	DeptPath        string       `yaml:"dept_path"`
	DeptBinding     string       `yaml:"dept_binding"`
	LocalDeptID     *int64       `yaml:"local_dept_id,omitempty"`
	DeptDisplayName string       `yaml:"dept_display_name,omitempty"`
	Columns         []columnYAML `yaml:"columns,omitempty"`
}

type columnYAML struct {
	ColumnID    string `yaml:"column_id"`
	Name        string `yaml:"name"`
	ChannelPath string `yaml:"channel_path"`
	Category    string `yaml:"category,omitempty"`
	Enabled     bool   `yaml:"enabled"`
}

func (w *Wizard) render(s Site) (string, error) {
	f := siteYAML{
		SiteCode: s.SiteCode, SiteName: strings.TrimSpace(s.SiteName), BaseURL: s.BaseURL, SiteRole: s.SiteRole,
		CMSAdapter: s.AdapterID, Access: model.AccessFull, RespectRobots: true, Enabled: true,
		Remark: "批量接入向导生成的草稿，栏目未订阅。", AdapterParams: s.Params,
	}
	if s.Browser {
		f.FetchStrategy = config.FetchBrowser
		f.StrategyOverrideReason = "首页需通过 Cookie 挑战（浏览器访问）"
	}
	for _, d := range s.Depts {
		dy := deptYAML{DeptPath: d.DeptPath, DeptBinding: d.Binding, DeptDisplayName: strings.TrimSpace(d.DisplayName)}
		if d.Binding == model.BindingMapped {
			dy.LocalDeptID = d.LocalDeptID
		}
		for _, c := range d.Columns {
			cy := columnYAML{ColumnID: c.ID, Name: c.Name, ChannelPath: "信息公开｜" + c.Path}
			if tags := w.Bundle.Topics.Tags(c.Name); len(tags) > 0 {
				cy.Category = tags[0]
			}
			dy.Columns = append(dy.Columns, cy)
		}
		f.Depts = append(f.Depts, dy)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s — draft from the batch onboarding wizard (%s).\n", f.SiteName, s.BaseURL)
	b.WriteString("# Review it, then add it to config/sites/. Every column is written unsubscribed\n")
	b.WriteString("# (enabled: false); subscribe columns per dept after onboarding.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return "", fmt.Errorf("encode site %s: %w", s.SiteCode, err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("encode site %s: %w", s.SiteCode, err)
	}
	return b.String(), nil
}

// Zip packs the drafts as sites/<site_code>.yaml, stamped with now, for
// download.
func Zip(drafts []Draft, now time.Time) ([]byte, error) {
	sorted := slices.Clone(drafts)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, d := range sorted {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: d.Name, Method: zip.Deflate, Modified: now})
		if err != nil {
			return nil, fmt.Errorf("zip drafts: %w", err)
		}
		if _, err := f.Write([]byte(d.YAML)); err != nil {
			return nil, fmt.Errorf("zip drafts: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zip drafts: %w", err)
	}
	return buf.Bytes(), nil
}
