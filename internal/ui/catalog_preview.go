package ui

import (
	"errors"
	"net/http"
	"strconv"

	"zhizhi/internal/target"
)

// catalogPreview reads the newest page of one catalog column from its site,
// politely and storing nothing, and shows its articles: what subscribing to
// the column would start collecting. The catalog opens it in a dialog; the
// page stands alone without script.
func (c *console) catalogPreview(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "栏目目录中没有这个栏目。")
		return
	}
	p, err := c.targets.PreviewColumn(r.Context(), id)
	switch {
	case errors.Is(err, target.ErrNotFound):
		c.notFound(w, r, "栏目目录中没有这个栏目。")
		return
	case errors.Is(err, target.ErrNoLister):
		p = &target.ColumnPreview{Problem: "本控制台未接入采集器，无法预览栏目。请在 zhizhi serve 中打开控制台。"}
		if e, err := c.store.ColumnEntryByID(r.Context(), id); err == nil {
			p.Column = *e
		}
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "catalog_preview", page{Title: "栏目预览 · " + p.Column.ColumnName, Active: "catalog", Data: p})
}
