package ui

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// deptRow is one line of the department tree.
type deptRow struct {
	model.Department
	Depth   int  // how far down the tree; the line is indented by it
	Match   bool // the name matched the search (its ancestors are shown for context)
	Targets int  // targets whose articles belong to the department
	Stale   int  // of them, enabled and quiet past the stale rule
	Failing int  // of them, enabled and whose last run failed
}

type deptListData struct {
	Search string
	Rows   []deptRow
	Total  int
	// The bad lines of a refused upload.
	BadLines []string
	MoreBad  int
}

// maxBadLines bounds how many bad CSV lines the page lists.
const maxBadLines = 100

// departmentList is the local department tree with a search, and for
// each department how many of its targets have gone stale or failed: the
// first place staff see that a department's column has died.
func (c *console) departmentList(w http.ResponseWriter, r *http.Request) {
	d, err := c.departmentListData(r, strings.TrimSpace(r.URL.Query().Get("q")))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "departments", page{Title: "本地部门", Active: "departments", Data: d})
}

func (c *console) departmentListData(r *http.Request, search string) (deptListData, error) {
	ctx := r.Context()
	d := deptListData{Search: search}
	depts, err := c.store.ListDepartments(ctx)
	if err != nil {
		return d, err
	}
	d.Total = len(depts)
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		return d, err
	}
	rep, err := health.Check(ctx, c.store, c.now())
	if err != nil {
		return d, err
	}
	stale, failing := map[string]bool{}, map[string]bool{}
	for _, s := range rep.Stale {
		stale[s.TargetCode] = true
	}
	for _, f := range rep.Failing {
		failing[f.TargetCode] = true
	}
	type counts struct{ targets, stale, failing int }
	byDept := map[int64]*counts{}
	for _, t := range targets {
		if t.DeptID == nil {
			continue
		}
		n := byDept[*t.DeptID]
		if n == nil {
			n = &counts{}
			byDept[*t.DeptID] = n
		}
		n.targets++
		if stale[t.TargetCode] {
			n.stale++
		}
		if failing[t.TargetCode] {
			n.failing++
		}
	}
	for _, row := range departmentOutline(depts, search) {
		if n := byDept[row.DeptID]; n != nil {
			row.Targets, row.Stale, row.Failing = n.targets, n.stale, n.failing
		}
		d.Rows = append(d.Rows, row)
	}
	return d, nil
}

// departmentOutline lays the departments out as a tree, parents before
// their children, siblings in OA order (order_id, then dept_id). With a
// search, only matching departments and the departments above them are
// kept. A department whose parent is missing, or that sits in a parent
// cycle (OA data is not always clean), starts a tree of its own rather
// than being lost.
func departmentOutline(depts []model.Department, search string) []deptRow {
	byID := make(map[int64]*model.Department, len(depts))
	for i := range depts {
		byID[depts[i].DeptID] = &depts[i]
	}
	match := func(dp *model.Department) bool {
		return search == "" || strings.Contains(dp.DeptName, search) || strings.Contains(dp.ShortName, search) ||
			strings.Contains(dp.FullName, search)
	}
	keep := map[int64]bool{}
	for i := range depts {
		if !match(&depts[i]) {
			continue
		}
		for cur := &depts[i]; cur != nil && !keep[cur.DeptID]; {
			keep[cur.DeptID] = true
			if cur.ParentDeptID == nil {
				break
			}
			cur = byID[*cur.ParentDeptID]
		}
	}
	children := map[int64][]*model.Department{}
	var roots []*model.Department
	for i := range depts {
		dp := &depts[i]
		if !keep[dp.DeptID] {
			continue
		}
		if p := dp.ParentDeptID; p != nil && *p != dp.DeptID && keep[*p] {
			children[*p] = append(children[*p], dp)
		} else {
			roots = append(roots, dp)
		}
	}
	order := func(a, b *model.Department) int {
		const none = int(^uint(0) >> 1)
		ao, bo := none, none
		if a.OrderID != nil {
			ao = *a.OrderID
		}
		if b.OrderID != nil {
			bo = *b.OrderID
		}
		return cmp.Or(cmp.Compare(ao, bo), cmp.Compare(a.DeptID, b.DeptID))
	}
	var out []deptRow
	placed := map[int64]bool{}
	var walk func(dp *model.Department, depth int)
	walk = func(dp *model.Department, depth int) {
		if placed[dp.DeptID] {
			return
		}
		placed[dp.DeptID] = true
		out = append(out, deptRow{Department: *dp, Depth: depth, Match: search != "" && match(dp)})
		kids := children[dp.DeptID]
		slices.SortStableFunc(kids, order)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortStableFunc(roots, order)
	for _, rt := range roots {
		walk(rt, 0)
	}
	// A cycle has no root: its members are placed from the lowest id.
	for i := range depts {
		if dp := &depts[i]; keep[dp.DeptID] && !placed[dp.DeptID] {
			walk(dp, 0)
		}
	}
	return out
}

// IndentClass is the style class that indents the row by its depth; the
// strict content policy allows no inline style, and trees deeper than
// eight levels share the last indent.
func (r deptRow) IndentClass() string { return "lvl-" + strconv.Itoa(min(r.Depth, 8)) }
