package api

import (
	"net/http"

	"zhizhi/internal/store"
)

// targetList lists targets by target_code, optionally of one site or one
// local department, enabled or not.
func (h *handler) targetList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	siteID := q.id("site_id")
	deptID := q.id("dept_id")
	enabled := q.boolean("enabled")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	targets, err := h.st.ListTargets(r.Context(), store.TargetFilter{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[targetView]{Items: []targetView{}}
	for i := range targets {
		t := &targets[i]
		if (siteID != nil && t.SiteID != *siteID) || (enabled != nil && t.Enabled != *enabled) ||
			(deptID != nil && (t.DeptID == nil || *t.DeptID != *deptID)) {
			continue
		}
		out.Items = append(out.Items, targetOf(t))
	}
	h.ok(w, r, out)
}
