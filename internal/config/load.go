// Package config owns zhizhi's configuration files: it loads the CMS
// adapter contracts (config/cms/*.yaml), the site files (config/sites/*.yaml),
// the topic synonyms and the department CSV, keeps where every key was
// written, lints them (Lint reports every problem at once as
// file:line:column); configsync writes sites, site departments and targets
// into the database. Nothing here ever writes back to the files: they are read-only
// templates under git and the database holds all runtime state
// (YAML holds templates; the database holds runtime state).
package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bundle is a loaded configuration directory.
type Bundle struct {
	Dir      string
	CMS      map[string]*Adapter // by adapter_id (the file stem)
	Sites    []*SiteFile         // sorted by file name
	Topics   Topics
	Alerts   *Alerts   // alerts.yaml; nil when the directory has none
	Problems []Problem // everything Load found, sorted; Sync refuses a bundle with errors

	// DepartmentIDs holds the dept_ids of departments.csv when the file
	// exists, together with those of the database when one was looked at
	// (nil when neither), so lint can check local_dept_id against it.
	DepartmentIDs map[int64]bool
	// deptsInDB says DepartmentIDs includes the database's departments.
	deptsInDB bool
}

// File names inside the configuration directory.
const (
	CMSDir          = "cms"
	SitesDir        = "sites"
	TopicsFile      = "topic_synonyms.yaml"
	DepartmentsFile = "departments.csv"
)

// Lint loads dir and returns every problem found, sorted by file, line and
// column. Paths in the problems are dir joined with the file's name, so they
// are relative to the working directory when dir is.
func Lint(dir string) []Problem {
	_, ps := Load(dir)
	return ps
}

// Options are what loading needs to know from outside the directory.
type Options struct {
	// Resolve is the resolve map (ZHIZHI_RESOLVE: host → ip:port). A site
	// may say owned: true only when the map pins its host to loopback: a
	// site running on this machine, such as the simulated web.
	Resolve map[string]string
	// Departments holds the dept_ids imported into the database
	// (local_department), nil when no database was looked at. The
	// database is where departments live — `dept import` writes there and
	// sync checks bindings there — so lint counts a department known when
	// it is in departments.csv or in the database.
	Departments map[int64]bool
}

// LintWith is Lint with opts.
func LintWith(dir string, opts Options) []Problem {
	_, ps := LoadWith(dir, opts)
	return ps
}

// Load reads and checks a configuration directory. It always returns a
// bundle holding whatever could be read; the problems (also kept in
// Bundle.Problems) say what is wrong.
func Load(dir string) (*Bundle, []Problem) {
	return LoadWith(dir, Options{})
}

// LoadWith is Load with opts.
func LoadWith(dir string, opts Options) (*Bundle, []Problem) {
	r := &reporter{resolve: opts.Resolve}
	b := &Bundle{Dir: dir, CMS: map[string]*Adapter{}, Topics: NewTopics(nil, nil)}
	defer func() {
		sortProblems(r.problems)
		b.Problems = r.problems
	}()
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		r.errorf(Pos{File: dir}, "set ZHIZHI_CONFIG_DIR (or --config-dir/--dir) to the directory holding cms/ and sites/",
			"configuration directory not found")
		return b, r.problems
	}

	for _, path := range yamlFiles(r, filepath.Join(dir, CMSDir)) {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		root, ok := parseYAMLFile(r, path)
		if !ok {
			b.CMS[name] = nil // present but broken: sites pointing at it get no second error
			continue
		}
		if root == nil {
			r.errorf(Pos{File: path}, "write the adapter contract (see docs/config.md)", "adapter file is empty")
			b.CMS[name] = nil
			continue
		}
		if root.Kind != yaml.MappingNode {
			r.errorf(Pos{File: path, Line: root.Line, Column: root.Column}, "write the adapter as `key: value` lines (see docs/config.md)",
				"an adapter file must be a mapping, got %s", kindName(root))
			b.CMS[name] = nil
			continue
		}
		b.CMS[name] = r.readAdapter(path, name, root)
	}

	sitePaths := yamlFiles(r, filepath.Join(dir, SitesDir))
	if len(sitePaths) == 0 {
		r.warnf(Pos{File: filepath.Join(dir, SitesDir)}, "add one YAML file per site (see docs/config.md)", "no site files, so nothing will be crawled")
	}
	parent := filepath.Dir(absOr(dir))
	for _, path := range sitePaths {
		root, ok := parseYAMLFile(r, path)
		if !ok {
			continue
		}
		if root == nil {
			r.errorf(Pos{File: path}, "write the site (see docs/config.md) or remove the file", "site file is empty")
			continue
		}
		if root.Kind != yaml.MappingNode {
			r.errorf(Pos{File: path, Line: root.Line, Column: root.Column}, "write the site as `key: value` lines (see docs/config.md)",
				"a site file must be a mapping, got %s", kindName(root))
			continue
		}
		s := r.readSite(path, root)
		if rel, err := filepath.Rel(parent, absOr(path)); err == nil {
			s.RelPath = filepath.ToSlash(rel)
		} else {
			s.RelPath = filepath.ToSlash(path)
		}
		b.Sites = append(b.Sites, s)
	}

	topicsPath := filepath.Join(dir, TopicsFile)
	if _, err := os.Stat(topicsPath); err == nil {
		if root, ok := parseYAMLFile(r, topicsPath); ok {
			b.Topics = r.readTopics(topicsPath, root)
		}
	}

	alertsPath := filepath.Join(dir, AlertsFile)
	if _, err := os.Stat(alertsPath); err == nil {
		if root, ok := parseYAMLFile(r, alertsPath); ok {
			b.Alerts = r.readAlerts(alertsPath, root)
		}
	}

	deptPath := filepath.Join(dir, DepartmentsFile)
	if f, err := os.Open(deptPath); err == nil {
		depts, lineErrs := ReadDepartmentsCSV(f, deptPath)
		f.Close()
		for _, le := range lineErrs {
			r.errorf(Pos{File: deptPath, Line: le.Line, Column: 1}, "", "%s", le.Msg)
		}
		b.DepartmentIDs = map[int64]bool{}
		for _, d := range depts {
			b.DepartmentIDs[d.DeptID] = true
		}
		if len(lineErrs) > 0 {
			b.DepartmentIDs = nil // unreliable: do not report every local_dept_id as unknown too
		}
		if len(lineErrs) == 0 && opts.Departments != nil {
			b.addDBDepartments(opts.Departments)
		}
	} else if opts.Departments != nil {
		b.DepartmentIDs = map[int64]bool{}
		b.addDBDepartments(opts.Departments)
	}

	b.crossCheck(r)
	return b, r.problems
}

// crossCheck runs the checks that span files: duplicate codes, adapters
// and their params, departments.
func (b *Bundle) crossCheck(r *reporter) {
	siteCodes := map[string]Pos{}
	for _, s := range b.Sites {
		if s.SiteCode != "" {
			p := s.Pos["site_code"]
			if first, dup := siteCodes[s.SiteCode]; dup {
				r.errorf(p, "give each site its own site_code (the first is at "+first.String()+")", "duplicate site_code %q", s.SiteCode)
			} else {
				siteCodes[s.SiteCode] = p
			}
		}
		if s.CMSAdapter != "" {
			b.checkAdapterSite(r, s)
		}
		if b.DepartmentIDs != nil {
			b.checkDepartments(r, s)
		}
	}
	targetCodes := map[string]Pos{}
	targetDepts := map[string]*Dept{}
	columns := map[string]TargetSpec{} // what a target collects → the first target
	for _, s := range b.Sites {
		for _, t := range s.Targets() {
			if t.TargetCode == "" {
				continue
			}
			if first, dup := targetCodes[t.TargetCode]; dup {
				if t.Dept != nil && t.Column.TargetCode == "" && targetDepts[t.TargetCode] == t.Dept {
					continue // the repeated column_id is reported already
				}
				what := "duplicate target_code %q"
				if t.Column != nil && t.Column.TargetCode == "" {
					what = "duplicate target_code %q (derived from <site_code>_<dept_path>_<column_id>)"
				}
				r.errorf(t.Pos, "give each target its own target_code (the first is at "+first.String()+")", what, t.TargetCode)
				continue
			}
			targetCodes[t.TargetCode] = t.Pos
			targetDepts[t.TargetCode] = t.Dept
			if key, what := collectedColumn(t); key != "" {
				if first, dup := columns[key]; dup {
					if !(t.Dept != nil && first.Dept == t.Dept) { // a column_id repeated in one dept is reported already
						r.errorf(t.Pos, "remove one of them, or point it at another column (the first is at "+first.Pos.String()+")",
							"target %s collects the same column as target %s (%s)", t.TargetCode, first.TargetCode, what)
					}
				} else {
					columns[key] = t
				}
			}
			if t.Column != nil && t.Column.TargetCode == "" && !targetCodeRe.MatchString(t.TargetCode) {
				r.errorf(t.Pos, "set target_code on the column explicitly", "derived target_code %q is not a valid code", t.TargetCode)
			}
		}
	}
}

// collectedColumn names what a target collects, so two targets collecting
// the same column (every article stored twice, the site asked twice) can be
// told apart from two that differ: a CMS column by its site's host, dept
// and column_id; a template target by its entry URL. The host stands for
// the site, so two site files for one host are caught too. key is "" when
// the target is too broken to say (its problems are reported elsewhere).
func collectedColumn(t TargetSpec) (key, what string) {
	if t.Column != nil {
		u, err := url.Parse(t.Site.BaseURL)
		if err != nil || u.Host == "" || t.Dept.DeptPath == "" || t.ColumnID == "" {
			return "", ""
		}
		host := hostOf(u)
		return "column\x00" + host + "\x00" + t.Dept.DeptPath + "\x00" + t.ColumnID,
			fmt.Sprintf("dept %s column_id %s on %s", t.Dept.DeptPath, t.ColumnID, host)
	}
	u, err := url.Parse(strings.TrimSpace(t.EntryURL))
	if err != nil || u.Host == "" {
		return "", ""
	}
	// Spellings of one address: case of scheme and host, a default port,
	// an empty path.
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = hostOf(u)
	if u.Path == "" {
		u.Path = "/"
	}
	return "entry\x00" + u.String(), "entry_url " + t.EntryURL
}

// hostOf is u's host in lower case without a default port.
func hostOf(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	scheme := strings.ToLower(u.Scheme)
	if p := u.Port(); p != "" && !(p == "80" && scheme == "http") && !(p == "443" && scheme == "https") {
		return net.JoinHostPort(h, p)
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]" // IPv6
	}
	return h
}

func (b *Bundle) checkAdapterSite(r *reporter, s *SiteFile) {
	a, exists := b.CMS[s.CMSAdapter]
	p := s.Pos["cms_adapter"]
	if !exists {
		known := make([]string, 0, len(b.CMS))
		for k := range b.CMS {
			known = append(known, k)
		}
		slices.Sort(known)
		fix := "add " + filepath.Join(b.Dir, CMSDir, s.CMSAdapter+".yaml")
		if c := closest(s.CMSAdapter, known); c != "" {
			fix = fmt.Sprintf("did you mean %s? (or add %s)", c, filepath.Join(b.Dir, CMSDir, s.CMSAdapter+".yaml"))
		}
		r.errorf(p, fix, "cms_adapter %q has no adapter file", s.CMSAdapter)
		return
	}
	if a == nil {
		return // the adapter file itself is broken and reported
	}
	var missing []string
	for _, req := range a.SiteTemplate.RequiredParams {
		if _, ok := s.AdapterParams[req]; !ok {
			missing = append(missing, req)
		}
	}
	if len(missing) > 0 {
		at := s.Pos["adapter_params"]
		if at.Line == 0 {
			at = p
		}
		r.errorf(at, "add adapter_params: {"+strings.Join(missing, ": …, ")+": …}",
			"adapter %s requires adapter_params %s", s.CMSAdapter, strings.Join(missing, ", "))
	}
}

func (b *Bundle) addDBDepartments(ids map[int64]bool) {
	for id := range ids {
		b.DepartmentIDs[id] = true
	}
	b.deptsInDB = true
}

func (b *Bundle) checkDepartments(r *reporter, s *SiteFile) {
	csv := filepath.Join(b.Dir, DepartmentsFile)
	check := func(id *int64, p Pos) {
		if id == nil || b.DepartmentIDs[*id] {
			return
		}
		if b.deptsInDB {
			r.errorf(p, "import it with `zhizhi dept import FILE.csv` (see `zhizhi dept list`) or correct the id",
				"local_dept_id %d is not in %s nor among the departments in the database", *id, DepartmentsFile)
			return
		}
		r.errorf(p, "add the department to "+csv+", or import it with `zhizhi dept import FILE.csv` where the database can be reached, or correct the id",
			"local_dept_id %d is not in %s (no database was reachable to look in)", *id, DepartmentsFile)
	}
	for _, d := range s.Depts {
		check(d.LocalDeptID, d.Pos["local_dept_id"])
	}
	for _, t := range s.TargetDecls {
		check(t.LocalDeptID, t.Pos["local_dept_id"])
	}
}

// yamlFiles lists the *.yaml and *.yml files of dir, sorted. A missing
// directory is not a problem here; what it means is reported by the caller.
func yamlFiles(r *reporter, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			r.errorf(Pos{File: dir}, "check the directory permissions", "cannot list directory: %v", err)
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") {
			continue
		}
		if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Counts returns how many sites, targets and adapters the bundle holds.
func (b *Bundle) Counts() (sites, targets, adapters int) {
	for _, s := range b.Sites {
		targets += len(s.Targets())
	}
	for _, a := range b.CMS {
		if a != nil {
			adapters++
		}
	}
	return len(b.Sites), targets, adapters
}
