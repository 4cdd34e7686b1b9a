package api

import "net/http"

// targetGet returns one target.
func (h *handler) targetGet(w http.ResponseWriter, r *http.Request) {
	getOne(h, w, r, "target", h.st.TargetByID, targetOf)
}
