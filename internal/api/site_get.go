package api

import "net/http"

// siteGet returns one site.
func (h *handler) siteGet(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := h.st.SiteByID(r.Context(), id)
	if err != nil {
		h.fail(w, r, notFoundOr(err, "no site with id %d", id))
		return
	}
	h.ok(w, r, siteOf(s))
}
