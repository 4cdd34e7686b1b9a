package api

import "net/http"

// siteDepartmentList lists a site's CMS departments (dept_path) and how
// each is bound to a local department.
func (h *handler) siteDepartmentList(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := newQuery(r)
	binding := q.oneOf("dept_binding", deptBindings...)
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if _, err := h.st.SiteByID(ctx, id); err != nil {
		h.fail(w, r, notFoundOr(err, "no site with id %d", id))
		return
	}
	depts, err := h.st.ListSiteDepartments(ctx, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[siteDepartmentView]{Items: []siteDepartmentView{}}
	for i := range depts {
		if binding != "" && depts[i].DeptBinding != binding {
			continue
		}
		out.Items = append(out.Items, siteDepartmentOf(&depts[i]))
	}
	h.ok(w, r, out)
}
