package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/target"
)

// targetCreatePreview runs the checks and the dry-run of a new target and
// saves nothing: a red dry-run is an answer here, not a refusal.
func (h *handler) targetCreatePreview(w http.ResponseWriter, r *http.Request) {
	in, err := h.createInput(w, r)
	if err != nil {
		h.failTarget(w, r, nil, err, createField)
		return
	}
	res, err := h.targets.PreviewCreate(r.Context(), in)
	if err != nil && !(errors.Is(err, target.ErrDryRunFailed) && res != nil) {
		h.failTarget(w, r, res, err, createField)
		return
	}
	h.ok(w, r, targetPreviewOf(res))
}
