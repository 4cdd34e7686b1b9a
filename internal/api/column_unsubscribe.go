package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/target"
)

type unsubscribeRequest struct {
	IDs []int64 `json:"ids"`
}

// columnUnsubscribe stops crawling catalog columns in bulk: their targets
// are switched off, never deleted.
func (h *handler) columnUnsubscribe(w http.ResponseWriter, r *http.Request) {
	var req unsubscribeRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if problems, err := h.checkColumnIDs(ctx, req.IDs); err != nil || len(problems) > 0 {
		h.failColumns(w, r, problems, err)
		return
	}
	subs, err := h.targets.Unsubscribe(ctx, req.IDs, principal(r).Actor())
	var ie *target.InputError
	if errors.As(err, &ie) {
		h.failTarget(w, r, nil, err, func(string) string { return "ids" })
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answerSubscriptions(w, r, subs)
}
