package ui

import (
	"errors"
	"net/http"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// targetEdit is the form of a saved target, filled with what is saved.
func (c *console) targetEdit(w http.ResponseWriter, r *http.Request) {
	t, site, ok := c.targetAndSite(w, r)
	if !ok {
		return
	}
	c.renderTargetForm(w, r, http.StatusOK, formOf(t, site.SiteCode), "")
}

// targetAndSite reads the target of the path and its site, answering the
// request itself (404, 500) when it cannot.
func (c *console) targetAndSite(w http.ResponseWriter, r *http.Request) (*model.Target, *model.Site, bool) {
	ctx := r.Context()
	t, err := c.store.TargetByCode(ctx, r.PathValue("code"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个采集目标。")
		return nil, nil, false
	}
	if err != nil {
		c.serverError(w, r, err)
		return nil, nil, false
	}
	site, err := c.store.SiteByID(ctx, t.SiteID)
	if err != nil {
		c.serverError(w, r, err)
		return nil, nil, false
	}
	return t, site, true
}
