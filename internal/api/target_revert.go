package api

import (
	"net/http"

	"zhizhi/internal/target"
)

type revertRequest struct {
	Field string `json:"field"`
}

// targetRevert gives a field of a target from the site files back to what
// the files say.
func (h *handler) targetRevert(w http.ResponseWriter, r *http.Request) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req revertRequest
	if err := decodeJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Field == "" {
		h.failTarget(w, r, nil, &target.InputError{Problems: []target.FieldError{{Field: "field",
			Message: "必填：要恢复为 YAML 值的字段，例如 enabled 或 sample_article_url"}}}, nil)
		return
	}
	ctx := r.Context()
	if _, err := h.targets.Revert(ctx, t.TargetCode, req.Field, principal(r).Actor()); err != nil {
		h.failTarget(w, r, nil, err, nil)
		return
	}
	now, err := h.st.TargetByID(ctx, t.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, targetOf(now))
}
