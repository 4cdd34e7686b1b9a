package api

import "net/http"

// targetGet returns one target.
func (h *handler) targetGet(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.st.TargetByID(r.Context(), id)
	if err != nil {
		h.fail(w, r, notFoundOr(err, "no target with id %d", id))
		return
	}
	h.ok(w, r, targetOf(t))
}
