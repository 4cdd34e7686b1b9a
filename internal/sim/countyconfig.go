package sim

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys of a site file, in the order the bundled files write them.
type siteFileYAML struct {
	SiteCode      string            `yaml:"site_code"`
	SiteName      string            `yaml:"site_name"`
	BaseURL       string            `yaml:"base_url"`
	SiteRole      string            `yaml:"site_role"`
	CMSAdapter    string            `yaml:"cms_adapter,omitempty"`
	Access        string            `yaml:"access"`
	FetchStrategy string            `yaml:"fetch_strategy,omitempty"`
	RespectRobots bool              `yaml:"respect_robots"`
	Owned         bool              `yaml:"owned"`
	Enabled       bool              `yaml:"enabled"`
	Remark        string            `yaml:"remark"`
	AdapterParams map[string]string `yaml:"adapter_params,omitempty"`
	Depts         []deptYAML        `yaml:"depts,omitempty"`
	Template      *yaml.Node        `yaml:"template,omitempty"`
	Targets       []targetYAML      `yaml:"targets,omitempty"`
}

type deptYAML struct {
	DeptPath        string       `yaml:"dept_path"`
	DeptBinding     string       `yaml:"dept_binding"`
	LocalDeptID     int64        `yaml:"local_dept_id"`
	DeptDisplayName string       `yaml:"dept_display_name"`
	Columns         []columnYAML `yaml:"columns"`
}

type columnYAML struct {
	ColumnID            string `yaml:"column_id"`
	Name                string `yaml:"name"`
	ChannelPath         string `yaml:"channel_path"`
	Category            string `yaml:"category"`
	ExpectedCadenceDays int    `yaml:"expected_cadence_days"`
	Enabled             bool   `yaml:"enabled"`
}

type targetYAML struct {
	TargetCode          string `yaml:"target_code"`
	TargetName          string `yaml:"target_name"`
	EntryURL            string `yaml:"entry_url"`
	SampleArticleURL    string `yaml:"sample_article_url"`
	DeptBinding         string `yaml:"dept_binding"`
	LocalDeptID         int64  `yaml:"local_dept_id"`
	ChannelName         string `yaml:"channel_name"`
	ChannelPath         string `yaml:"channel_path"`
	ContentCategory     string `yaml:"content_category"`
	ExpectedCadenceDays int    `yaml:"expected_cadence_days"`
	Enabled             bool   `yaml:"enabled"`
}

// WriteCountyConfig writes the configuration directory of the world's
// generated counties to dir: sites/<code>.yaml for each, departments.csv
// with every county's government, office and departments, and, taken from
// the bundled configuration directory, cms/gkmlpt.yaml and
// topic_synonyms.yaml. A template county's site file takes its list and
// detail selectors from the bundled file of the hand-written site of the
// same kind, so both are read the same way. The hand-written sites are not
// in it: their configuration is the bundled one.
//
// dir must not exist or be empty. Everything is written beside it first
// and renamed into place, so a failure leaves nothing behind.
func (w *World) WriteCountyConfig(dir, bundled string) error {
	if len(w.counties) == 0 {
		return errors.New("write county config: the world has no generated counties")
	}
	dir = filepath.Clean(dir)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("write county config: %s is a file — give a new directory", dir)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("write county config: %s is not empty — give a new directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write county config: %w", err)
	}
	files, err := w.countyConfigFiles(bundled)
	if err != nil {
		return fmt.Errorf("write county config: %w", err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write county config: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".zhizhi-config-")
	if err != nil {
		return fmt.Errorf("write county config: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	for name, body := range files {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write county config: %w", err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return fmt.Errorf("write county config: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write county config: %w", err)
	}
	// An empty dir is replaced; rename refuses a non-empty one, so a
	// directory filled meanwhile is never overwritten.
	_ = os.Remove(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write county config: %w", err)
	}
	done = true
	return nil
}

// countyConfigFiles returns the files of the county configuration by
// slash-separated name.
func (w *World) countyConfigFiles(bundled string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{"cms/gkmlpt.yaml", "topic_synonyms.yaml"} {
		b, err := os.ReadFile(filepath.Join(bundled, filepath.FromSlash(name)))
		if err != nil {
			return nil, fmt.Errorf("the bundled configuration has no %s (%w) — run from the repository or point --config-dir at its config directory", name, err)
		}
		files[name] = b
	}
	templates := map[siteKind]*yaml.Node{}
	for _, s := range w.counties {
		f := siteFileYAML{
			SiteCode: s.Code, SiteName: s.Name, BaseURL: "http://" + s.Host, SiteRole: "county_local",
			Access: "full", RespectRobots: true, Enabled: true,
		}
		if s.Kind == kindGkmlpt {
			f.CMSAdapter = "gkmlpt"
			f.Remark = "生成的县区 gkmlpt 站点（模拟政务网）。"
			f.AdapterParams = map[string]string{"sid": s.SID}
			f.Depts = countyDeptsYAML(s)
		} else {
			t, ok := templates[s.Kind]
			if !ok {
				var err error
				if t, err = bundledTemplate(bundled, s.Kind); err != nil {
					return nil, err
				}
				templates[s.Kind] = t
			}
			f.FetchStrategy = "direct"
			f.Remark = "生成的县区模板站点（模拟政务网）。"
			f.Template = t
			f.Targets = countyTargetsYAML(s)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s — a generated county of the simulated web (zhizhi sim --counties).\n", s.Name)
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("encode %s: %w", s.Code, err)
		}
		files["sites/"+s.Code+".yaml"] = b.Bytes()
	}
	files["departments.csv"] = w.countyDepartmentsCSV()
	return files, nil
}

func cadenceDays(c *column) int { return max(1, int((c.Cadence.Hours()+23)/24)) }

func countyDeptsYAML(s *site) []deptYAML {
	var out []deptYAML
	for _, d := range s.Depts {
		dy := deptYAML{
			DeptPath: d.Path, DeptBinding: "mapped", LocalDeptID: countyDeptID(s.county, countyDeptIndex(d.Path)),
			DeptDisplayName: d.Name,
		}
		for _, c := range s.columns {
			if c.dept != d || c.TargetCode == "" {
				continue
			}
			dy.Columns = append(dy.Columns, columnYAML{
				ColumnID: c.ID, Name: c.Name, ChannelPath: "信息公开｜" + strings.TrimSpace(c.Name),
				Category: countyKind(c.Name).topic, ExpectedCadenceDays: cadenceDays(c), Enabled: true,
			})
		}
		out = append(out, dy)
	}
	return out
}

func countyTargetsYAML(s *site) []targetYAML {
	var out []targetYAML
	for _, c := range s.columns {
		cc := countyKind(c.Name)
		name := strings.TrimSpace(c.Name)
		out = append(out, targetYAML{
			TargetCode: c.TargetCode, TargetName: s.Name + "｜" + name,
			EntryURL:         "http://" + s.Host + "/" + c.ID + "/",
			SampleArticleURL: "http://" + s.Host + c.articles[len(c.articles)-1].Path,
			DeptBinding:      "mapped", LocalDeptID: countyDeptID(s.county, countyDeptIndex(cc.dept)),
			ChannelName: c.Name, ChannelPath: "信息公开｜" + name, ContentCategory: cc.topic,
			ExpectedCadenceDays: cadenceDays(c), Enabled: true,
		})
	}
	return out
}

// bundledTemplate returns the template: block of the bundled site file of
// the hand-written site of kind k.
func bundledTemplate(bundled string, k siteKind) (*yaml.Node, error) {
	for _, s := range defineSites() {
		if s.Kind != k {
			continue
		}
		path := filepath.Join(bundled, "sites", s.Code+".yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("the bundled configuration has no sites/%s.yaml (%w) — run from the repository or point --config-dir at its config directory", s.Code, err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			m := doc.Content[0].Content
			for j := 0; j+1 < len(m); j += 2 {
				if m[j].Value == "template" {
					return m[j+1], nil
				}
			}
		}
		return nil, fmt.Errorf("%s has no template: block to take the selectors from", path)
	}
	return nil, fmt.Errorf("no hand-written site of kind %d", k)
}

// countyDepartmentsCSV lists, per county, its government, its office and
// every department of countyDepts, in the bundled departments.csv format.
func (w *World) countyDepartmentsCSV() []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write([]string{"DEPT_ID", "DEPT_NAME", "PARENT_DEPT_ID", "DEPT_LEVEL", "DEPT_CODE", "SHORT_NAME", "FULL_NAME", "STATE", "ORDER_ID", "UPDATED_AT"})
	const updated = "2026-10-15 08:00:00"
	for _, s := range w.counties {
		i := s.county
		county := s.City
		root := countyDeptID(i, 0)
		code := fmt.Sprintf("45%04d", i)
		_ = cw.Write([]string{fmt.Sprint(root), county + "人民政府", "", "1", code, county + "政府", county + "人民政府", "1", fmt.Sprint(i), updated})
		for k, d := range append([]countyDept{countyOffice}, countyDepts...) {
			name := county + d.name
			_ = cw.Write([]string{fmt.Sprint(countyDeptID(i, k+1)), name, fmt.Sprint(root), "2", fmt.Sprintf("%s%02d", code, k+1), name, name, "1", fmt.Sprint(k + 1), updated})
		}
	}
	cw.Flush()
	return b.Bytes()
}
