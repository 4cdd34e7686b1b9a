package ui

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/store"
)

// fullListMax is how many local departments each row's choice lists in
// full; beyond it a row lists its candidates and the search finds the rest.
const fullListMax = 300

// runView is what the run page shows: the progress while the run works,
// then the results table the person edits.
type runView struct {
	ID       string
	Adapter  string
	Started  time.Time
	Finished time.Time
	State    runState
	Running  bool
	Failure  string

	Lines, Detected          int
	SitesTotal, SitesScanned int
	DeptsTotal, DeptsScanned int
	Problems                 []runProblem
	Detections               []onboard.Detection
	Sites                    []siteView
	Unmatched                []onboard.Detection
	HasDrafts                bool
	Refused                  []string // the submission's problems no row holds
	ManyDepartments          bool     // the choice lists candidates only; search for the rest
	BindingChoices           any
	SiteRoles                []string
}

type siteView struct {
	Index    int
	Site     onboard.Site
	Include  bool
	Problems []string
	Depts    []deptView
}

type deptView struct {
	Field    string // the form field prefix: dept-<site>-<row>
	Dept     onboard.Dept
	Select   deptSelect
	Problems []string
}

// deptSelect is a row's local department choice.
type deptSelect struct {
	Name    string // the form field
	Query   string // the search that listed Options
	Options []deptOption
	All     []deptOption
	NoMatch bool // the search found nothing
}

type deptOption struct {
	ID       int64
	Name     string
	Note     string
	Selected bool
}

// onboardShow is a run's page: its progress while it works (the page
// polls), then the results to choose bindings in.
func (c *console) onboardShow(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	depts, err := c.store.ListDepartments(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	v := c.runView(run, depts, nil)
	c.renderRun(w, r, http.StatusOK, v, "")
}

// onboardProgress is the polled part of a running run's page. When the
// run is over, htmx is told to load the whole page, which then shows the
// results.
func (c *console) onboardProgress(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.FromContext(r.Context())
	page := Prefix + "/onboard/" + url.PathEscape(r.PathValue("id"))
	if r.Header.Get("HX-Request") != "true" {
		http.Redirect(w, r, page, http.StatusSeeOther)
		return
	}
	run, err := c.loadRun(r.Context(), r.PathValue("id"), runOwner(p))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	switch {
	case err != nil || run.state != runRunning:
		// Over, expired or not this person's: the whole page says which,
		// and the polling stops.
		w.Header().Set("HX-Redirect", page)
		w.WriteHeader(http.StatusNoContent)
	default:
		c.renderFragment(w, r, "onboard_run", "progress", c.runView(run, nil, nil))
	}
}

func (c *console) renderRun(w http.ResponseWriter, r *http.Request, status int, v runView, msg string) {
	title := "批量接入向导 · 扫描结果"
	if v.Running {
		title = "批量接入向导 · 正在识别与扫描"
	}
	c.render(w, r, status, "onboard_run", page{Title: title, Active: "wizard", Error: msg, Data: v})
}

// runView snapshots run for the page; problems are the last submission's.
func (c *console) runView(run *wizardRun, depts []model.Department, problems []onboard.RowProblem) runView {
	v := runView{ID: run.ID, Adapter: run.Adapter, Started: run.Started, Finished: run.finished, State: run.state,
		Running: run.state == runRunning, Failure: run.failure, Lines: len(run.Lines), Detected: len(run.detections),
		SitesTotal: run.sitesTotal, SitesScanned: run.sitesScanned, DeptsTotal: run.deptsTotal,
		DeptsScanned: run.deptsScanned, Problems: append([]runProblem(nil), run.problems...),
		Detections: append([]onboard.Detection(nil), run.detections...), HasDrafts: len(run.drafts) > 0,
		BindingChoices: bindingChoices, SiteRoles: model.SiteRoles}
	if v.Running {
		return v
	}
	for _, d := range run.detections {
		if !d.Matched() {
			v.Unmatched = append(v.Unmatched, d)
		}
	}
	siteProblems := map[string][]string{}
	rowProblems := map[string][]string{}
	for _, p := range problems {
		switch {
		case p.BaseURL == "":
			v.Refused = append(v.Refused, p.Problem)
		case p.DeptPath == "":
			siteProblems[p.BaseURL] = append(siteProblems[p.BaseURL], p.Problem)
		default:
			k := p.BaseURL + "\x00" + p.DeptPath
			rowProblems[k] = append(rowProblems[k], p.Problem)
		}
	}
	byID := map[int64]model.Department{}
	var all []deptOption
	for _, d := range depts {
		byID[d.DeptID] = d
	}
	v.ManyDepartments = len(depts) > fullListMax
	if !v.ManyDepartments {
		sorted := append([]model.Department(nil), depts...)
		sort.SliceStable(sorted, func(i, j int) bool { return orderOf(sorted[i]) < orderOf(sorted[j]) })
		for _, d := range sorted {
			if d.State != 0 {
				all = append(all, deptOption{ID: d.DeptID, Name: d.DeptName})
			}
		}
	}
	for i, s := range run.sites {
		sv := siteView{Index: i, Site: s, Include: run.include[i], Problems: siteProblems[s.BaseURL]}
		for j, d := range s.Depts {
			dv := deptView{Field: fmt.Sprintf("dept-%d-%d", i, j), Dept: d, Problems: rowProblems[s.BaseURL+"\x00"+d.DeptPath]}
			dv.Select.Name = dv.Field + "-local"
			dv.Select.Options, dv.Select.All = choiceOptions(d, byID, all)
			sv.Depts = append(sv.Depts, dv)
		}
		v.Sites = append(v.Sites, sv)
	}
	return v
}

// choiceOptions lists a row's local department choice: the chosen one,
// then the suggestion's candidates; all lists the rest when the directory
// is small enough to list.
func choiceOptions(d onboard.Dept, byID map[int64]model.Department, all []deptOption) ([]deptOption, []deptOption) {
	var top []deptOption
	seen := map[int64]bool{}
	if d.LocalDeptID != nil {
		o := deptOption{ID: *d.LocalDeptID, Selected: true}
		if dept, ok := byID[o.ID]; ok {
			o.Name = dept.DeptName
		} else {
			o.Name, o.Note = "部门 "+strconv.FormatInt(o.ID, 10), "不存在"
		}
		top = append(top, o)
		seen[o.ID] = true
	}
	for _, cand := range d.Suggested.Candidates {
		if !seen[cand.DeptID] {
			top = append(top, deptOption{ID: cand.DeptID, Name: cand.Name, Note: cand.Match})
			seen[cand.DeptID] = true
		}
	}
	var rest []deptOption
	for _, o := range all {
		if !seen[o.ID] {
			rest = append(rest, o)
		}
	}
	return top, rest
}

func orderOf(d model.Department) int {
	if d.OrderID == nil {
		return 1 << 30
	}
	return *d.OrderID
}

// renderFragment writes one block of a page's templates alone: the part
// htmx swaps in.
func (c *console) renderFragment(w http.ResponseWriter, r *http.Request, name, block string, data any) {
	t, ok := c.pages[name]
	if !ok {
		c.serverError(w, r, fmt.Errorf("no template %q", name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, data); err != nil {
		c.serverError(w, r, fmt.Errorf("render %s/%s: %w", name, block, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}
