package api

import "net/http"

// targetDisable switches a target off; its articles and history stay.
func (h *handler) targetDisable(w http.ResponseWriter, r *http.Request) {
	h.setEnabled(w, r, false)
}
