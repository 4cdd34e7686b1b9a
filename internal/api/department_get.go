package api

import (
	"net/http"
	"time"

	"zhizhi/internal/health"
	"zhizhi/internal/store"
)

// departmentTarget is a target of the department with what tells a person
// whether its column is alive.
type departmentTarget struct {
	targetView
	// Stale: enabled, and quiet for longer than the stale rule allows.
	Stale       bool            `json:"stale"`
	LastRun     *runView        `json:"last_run"`
	LastArticle *articleSummary `json:"last_article"`
}

type runView struct {
	Outcome    string    `json:"outcome"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Created    int       `json:"created"`
	Updated    int       `json:"updated"`
	Failed     int       `json:"failed"`
	Error      string    `json:"error"`
}

type articleSummary struct {
	ID          int64   `json:"id"`
	Title       string  `json:"title"`
	PublishDate *string `json:"publish_date"`
	URL         string  `json:"url"`
}

type departmentDetail struct {
	Department departmentView     `json:"department"`
	Parent     *departmentView    `json:"parent"`
	Children   []departmentView   `json:"children"`
	Targets    []departmentTarget `json:"targets"`
}

// departmentGet returns a local department, where it sits, and its
// targets with their last crawl, last article and health: the page where
// operations notice that a department's column has died.
func (h *handler) departmentGet(w http.ResponseWriter, r *http.Request) {
	d, err := byPath(r, h.st.DepartmentByID, "no local department with dept_id %d")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	out := departmentDetail{Department: departmentOf(d), Children: []departmentView{}, Targets: []departmentTarget{}}
	all, err := h.st.ListDepartments(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for i := range all {
		o := &all[i]
		if d.ParentDeptID != nil && o.DeptID == *d.ParentDeptID {
			p := departmentOf(o)
			out.Parent = &p
		}
		if o.ParentDeptID != nil && *o.ParentDeptID == d.DeptID && o.DeptID != d.DeptID {
			out.Children = append(out.Children, departmentOf(o))
		}
	}
	targets, err := h.st.DepartmentTargets(ctx, d.DeptID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	runs, err := h.st.LastTargetRuns(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	for i := range targets {
		t := &targets[i]
		dt := departmentTarget{targetView: targetOf(t)}
		since := t.CreatedAt
		if t.LastArticleTime != nil {
			since = *t.LastArticleTime
		}
		dt.Stale = t.Enabled && health.IsStale(since, t.ExpectedCadenceDays, now)
		if run, ok := runs[t.ID]; ok {
			dt.LastRun = &runView{Outcome: run.Outcome, StartedAt: run.StartedAt, FinishedAt: run.FinishedAt,
				Created: run.Created, Updated: run.Updated, Failed: run.Failed, Error: run.Error}
		}
		tid := t.ID
		last, err := h.st.QueryArticles(ctx, store.ArticleQuery{TargetID: &tid, Limit: 1})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if len(last) > 0 {
			a := &last[0]
			dt.LastArticle = &articleSummary{ID: a.ID, Title: a.Title, PublishDate: orNull(a.PublishDate), URL: a.URL}
		}
		out.Targets = append(out.Targets, dt)
	}
	h.ok(w, r, out)
}
