package ui

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"zhizhi/internal/onboard"
)

// deptFieldRe is a dept row's local department field of the results form.
var deptFieldRe = regexp.MustCompile(`^dept-[0-9]{1,4}-[0-9]{1,4}-local$`)

// onboardDeptSearch answers a row's department search (htmx): the row's
// choice list again, the departments matching the query first and the
// current choice kept.
func (c *console) onboardDeptSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	field := q.Get("field")
	if !deptFieldRe.MatchString(field) {
		http.Error(w, "缺少或无效的 field 参数", http.StatusBadRequest)
		return
	}
	depts, err := c.store.ListDepartments(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	dir := onboard.NewDirectory(depts)
	d := deptSelect{Name: field, Query: strings.TrimSpace(q.Get("q"))}
	seen := map[int64]bool{}
	if id, err := strconv.ParseInt(q.Get(field), 10, 64); err == nil && id > 0 {
		o := deptOption{ID: id, Selected: true, Name: "部门 " + strconv.FormatInt(id, 10), Note: "不存在"}
		if dept, ok := dir.Department(id); ok {
			o.Name, o.Note = dept.DeptName, ""
		}
		d.Options = append(d.Options, o)
		seen[id] = true
	}
	if d.Query != "" {
		hits := dir.Search(d.Query, 20)
		d.NoMatch = len(hits) == 0
		for _, cand := range hits {
			if !seen[cand.DeptID] {
				d.Options = append(d.Options, deptOption{ID: cand.DeptID, Name: cand.Name, Note: cand.Match})
				seen[cand.DeptID] = true
			}
		}
	}
	c.renderFragment(w, r, "onboard_run", "dept-select", d)
}
