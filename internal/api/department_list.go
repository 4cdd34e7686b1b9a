package api

import (
	"net/http"
	"slices"
	"strings"

	"zhizhi/internal/model"
)

// departmentNode is a local department with its sub-departments.
type departmentNode struct {
	departmentView
	Children []*departmentNode `json:"children"`
}

// departmentList returns the local departments as a tree. With q, only the
// departments whose name contains q are kept, with the departments above
// them so each stays in its place.
func (h *handler) departmentList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	search := q.text("q")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	depts, err := h.st.ListDepartments(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, list[*departmentNode]{Items: departmentTree(depts, search)})
}

// departmentTree links departments to their parents. A department whose
// parent is not in the table, or that sits in a parent cycle (OA data is
// not always clean), is shown at the top rather than lost.
func departmentTree(depts []model.Department, search string) []*departmentNode {
	nodes := make(map[int64]*departmentNode, len(depts))
	for i := range depts {
		nodes[depts[i].DeptID] = &departmentNode{departmentView: departmentOf(&depts[i]), Children: []*departmentNode{}}
	}
	keep := map[int64]bool{}
	for id, n := range nodes {
		if search != "" && !matchesDept(n, search) {
			continue
		}
		// Keep the match and the chain above it, stopping at a cycle.
		for cur := id; !keep[cur]; {
			keep[cur] = true
			p := nodes[cur].ParentDeptID
			if p == nil || nodes[*p] == nil {
				break
			}
			cur = *p
		}
	}
	var roots []*departmentNode
	placed := map[int64]bool{}
	var place func(n *departmentNode)
	place = func(n *departmentNode) {
		placed[n.DeptID] = true
		for _, d := range depts {
			c := nodes[d.DeptID]
			if keep[c.DeptID] && !placed[c.DeptID] && c.ParentDeptID != nil && *c.ParentDeptID == n.DeptID {
				n.Children = append(n.Children, c)
				place(c)
			}
		}
		sortDepts(n.Children)
	}
	for _, d := range depts {
		n := nodes[d.DeptID]
		if keep[n.DeptID] && (n.ParentDeptID == nil || !keep[*n.ParentDeptID] || *n.ParentDeptID == n.DeptID) {
			roots = append(roots, n)
			place(n)
		}
	}
	for _, d := range depts { // cycles: no member has an outside parent
		if n := nodes[d.DeptID]; keep[n.DeptID] && !placed[n.DeptID] {
			roots = append(roots, n)
			place(n)
		}
	}
	sortDepts(roots)
	if roots == nil {
		roots = []*departmentNode{}
	}
	return roots
}

func matchesDept(n *departmentNode, s string) bool {
	return strings.Contains(n.DeptName, s) || strings.Contains(n.ShortName, s) || strings.Contains(n.FullName, s)
}

// sortDepts orders siblings the way OA does: by order_id, then dept_id.
func sortDepts(ns []*departmentNode) {
	slices.SortStableFunc(ns, func(a, b *departmentNode) int {
		ao, bo := orderKey(a.OrderID), orderKey(b.OrderID)
		if ao != bo {
			if ao < bo {
				return -1
			}
			return 1
		}
		switch {
		case a.DeptID < b.DeptID:
			return -1
		case a.DeptID > b.DeptID:
			return 1
		}
		return 0
	})
}

func orderKey(o *int) int {
	if o == nil {
		return int(^uint(0) >> 1)
	}
	return *o
}
