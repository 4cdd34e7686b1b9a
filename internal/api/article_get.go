package api

import "net/http"

// articleGet returns one article with its text, public attributes and
// attachments.
func (h *handler) articleGet(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a, err := h.st.ArticleByID(r.Context(), id)
	if err != nil {
		h.fail(w, r, notFoundOr(err, "no article with id %d", id))
		return
	}
	h.ok(w, r, articleDetailOf(a))
}
