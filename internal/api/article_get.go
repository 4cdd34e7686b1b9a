package api

import "net/http"

// articleGet returns one article with its text, public attributes and
// attachments.
func (h *handler) articleGet(w http.ResponseWriter, r *http.Request) {
	getOne(h, w, r, "article", h.st.ArticleByID, articleDetailOf)
}
