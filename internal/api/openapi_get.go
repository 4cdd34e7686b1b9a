package api

import "net/http"

// openapiGet serves the API's description.
func (h *handler) openapiGet(w http.ResponseWriter, r *http.Request) {
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(openapiYAML)
}
