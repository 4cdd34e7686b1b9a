package api

import (
	"fmt"
	"net/http"

	"zhizhi/internal/articlejson"
)

// articleGet returns one article with its text, public attributes and
// attachments: the same object as its line of the export, and when an
// export last marked it.
func (h *handler) articleGet(w http.ResponseWriter, r *http.Request) {
	a, err := byPath(r, h.st.ArticleByID, "no article with id %d")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	site, err := h.st.SiteByID(r.Context(), a.SiteID)
	if err != nil {
		h.fail(w, r, fmt.Errorf("article %d: site %d: %w", a.ID, a.SiteID, err))
		return
	}
	target, err := h.st.TargetByID(r.Context(), a.TargetID)
	if err != nil {
		h.fail(w, r, fmt.Errorf("article %d: target %d: %w", a.ID, a.TargetID, err))
		return
	}
	h.ok(w, r, articleDetail{articlejson.Of(a, site, target), exportMark{a.ExportedToRAGAt}})
}
