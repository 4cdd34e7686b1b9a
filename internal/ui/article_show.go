package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type articleData struct {
	A                        *model.Article
	Site                     *model.Site
	Target                   *model.Target
	Dept                     *model.Department
	StatusLabel, StatusClass string
	// RawAttrs is the public-attribute block as the page labelled it,
	// in label order; empty when the page had none.
	RawAttrs []labelValue
	// CorpusOn: the console has the corpus; WorkID is the work the article
	// became, "" when it was not taken in.
	CorpusOn bool
	WorkID   string
}

// articleShow is one article: its public attributes, where it came from,
// its text and attachments. Every value came from a page on the web and is
// shown as text.
func (c *console) articleShow(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这篇文章。")
		return
	}
	c.renderArticle(w, r, http.StatusOK, id, "")
}

// renderArticle shows article id with status, and errMsg when an action
// on it was refused.
func (c *console) renderArticle(w http.ResponseWriter, r *http.Request, status int, id int64, errMsg string) {
	ctx := r.Context()
	a, err := c.store.ArticleByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这篇文章。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := articleData{A: a}
	d.StatusLabel, d.StatusClass = articleStatusLabel(a.Status)
	if d.Site, err = c.store.SiteByID(ctx, a.SiteID); err != nil {
		c.serverError(w, r, err)
		return
	}
	if d.Target, err = c.store.TargetByID(ctx, a.TargetID); err != nil {
		c.serverError(w, r, err)
		return
	}
	if a.DeptID != nil {
		// Departments are a snapshot; an article may point at one since
		// dropped from the OA subset, and still shows its id.
		dept, err := c.store.DepartmentByID(ctx, *a.DeptID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			c.serverError(w, r, err)
			return
		}
		d.Dept = dept
	}
	var meta struct {
		Raw map[string]any `json:"raw"`
	}
	if len(a.MetadataJSON) > 0 && json.Unmarshal(a.MetadataJSON, &meta) == nil {
		for k, v := range meta.Raw {
			s, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				s = string(b)
			}
			d.RawAttrs = append(d.RawAttrs, labelValue{Label: k, Value: s})
		}
		slices.SortFunc(d.RawAttrs, func(x, y labelValue) int { return strings.Compare(x.Label, y.Label) })
	}
	if c.corpus != nil {
		d.CorpusOn = true
		work, err := c.store.CorpusWorkByAlias(ctx, "article:"+strconv.FormatInt(a.ID, 10))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			c.serverError(w, r, err)
			return
		}
		if work != nil {
			d.WorkID = work.ID
		}
	}
	c.render(w, r, status, "article", page{Title: "文章 · " + a.Title, Active: "articles", Error: errMsg, Data: d})
}
