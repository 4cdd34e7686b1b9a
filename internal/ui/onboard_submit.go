package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
)

// onboardSubmit takes the person's choices — which sites to draft, their
// site_code, name and role, each dept row's binding and local department —
// and keeps them with the run whatever happens next. A row still pending
// is refused by name, as is anything else the drafts cannot hold; the page
// comes back with the choices as they were made. Accepted, the drafts are
// rendered and kept with the run (no configuration is written) and the
// preview follows.
func (c *console) onboardSubmit(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "表单过大或无法解析", http.StatusBadRequest)
		return
	}
	depts, err := c.store.ListDepartments(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if run.state == runRunning {
		http.Redirect(w, r, Prefix+"/onboard/"+run.ID, http.StatusSeeOther)
		return
	}
	sites, include := applyChoices(run.sites, run.include, r.PostForm)
	run.sites, run.include, run.drafts = sites, include, nil
	// The choices are kept whatever comes next, for every console.
	if err := c.saveChoices(ctx, run); err != nil {
		c.serverError(w, r, err)
		return
	}

	var chosen []onboard.Site
	for i, s := range sites {
		if include[i] {
			chosen = append(chosen, s)
		}
	}
	var problems []onboard.RowProblem
	msg := ""
	if pending := onboard.Pending(chosen); len(pending) > 0 {
		msg = fmt.Sprintf("有 %d 行部门的绑定方式仍为待定（pending），向导不能继续：%s。请为这些行选择 mapped、city_level、cross_dept 或 external_ref。",
			len(pending), strings.Join(pending, "、"))
	}
	wiz, err := c.onboard(ctx)
	if err != nil {
		c.serverError(w, r, fmt.Errorf("onboarding wizard: %w", err))
		return
	}
	dir := onboard.NewDirectory(depts)
	drafts, problems := wiz.Drafts(chosen, dir)
	if len(problems) > 0 {
		if msg == "" {
			msg = fmt.Sprintf("还有 %d 处需要处理，草稿未生成；已选的内容都保留在下面。", len(problems))
		}
		c.renderRun(w, r, http.StatusUnprocessableEntity, c.runView(run, depts, problems), msg)
		return
	}
	run.drafts = drafts
	if err := c.saveChoices(ctx, run); err != nil {
		c.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"/onboard/"+run.ID+"/preview", http.StatusSeeOther)
}

// applyChoices returns a copy of sites with the form's choices applied.
// Fields the form does not carry keep their value; a value that is not
// one of the choices is kept as given, for the check to name.
func applyChoices(sites []onboard.Site, include []bool, form map[string][]string) ([]onboard.Site, []bool) {
	get := func(k string) (string, bool) {
		v, ok := form[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	out := make([]onboard.Site, len(sites))
	inc := make([]bool, len(sites))
	_, anySite := get("submitted")
	for i, s := range sites {
		s.Depts = append([]onboard.Dept(nil), s.Depts...)
		prefix := fmt.Sprintf("site-%d-", i)
		inc[i] = include[i]
		if anySite {
			_, inc[i] = get(prefix + "include")
		}
		if v, ok := get(prefix + "code"); ok {
			s.SiteCode = strings.TrimSpace(v)
		}
		if v, ok := get(prefix + "name"); ok {
			s.SiteName = oneLine(v)
		}
		if v, ok := get(prefix + "role"); ok {
			s.SiteRole = strings.TrimSpace(v)
		}
		for j := range s.Depts {
			d := &s.Depts[j]
			field := fmt.Sprintf("dept-%d-%d-", i, j)
			if v, ok := get(field + "binding"); ok {
				d.Binding = strings.TrimSpace(v)
			}
			if v, ok := get(field + "local"); ok {
				d.LocalDeptID = nil
				if id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && id > 0 {
					d.LocalDeptID = &id
				}
			}
			// Only a mapped row names a local department; a choice left in
			// the other column after switching away is not the person's
			// intent.
			if d.Binding != model.BindingMapped {
				d.LocalDeptID = nil
			}
		}
		out[i] = s
	}
	return out, inc
}

// oneLine keeps a name on one line: a site file's comment repeats it, and
// a line break there would start YAML of the sender's making.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}
