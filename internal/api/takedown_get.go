package api

import (
	"net/http"

	"zhizhi/internal/model"
)

// takedownGet is one request, with its receipt once carried out.
func (h *handler) takedownGet(w http.ResponseWriter, r *http.Request) {
	getOne(h, w, r, "takedown request", h.st.TakedownByID, func(k *model.Takedown) takedownView {
		return takedownOf(k, h.now())
	})
}
