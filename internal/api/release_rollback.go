package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/store"
)

type rollbackRequest struct {
	// To is the verified release to return to; empty: the one active
	// before the current one.
	To string `json:"to"`
}

// releaseRollback returns, in one step, to the release active before the
// current one (or to the verified release named in to), admins only,
// audited as a rollback.
func (h *handler) releaseRollback(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	var req rollbackRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err == nil && req.To != "" {
		err = versionOf("to", req.To)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	act, err := h.st.ActiveCorpusRelease(ctx)
	if errors.Is(err, store.ErrNotFound) {
		err = errorf(http.StatusConflict, "conflict", "no release is active, so there is nothing to roll back from")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	to := req.To
	if to == "" {
		to = act.Previous
	}
	if to == "" {
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"release %s has no earlier active release to return to; name one in to", act.Version))
		return
	}
	if err := h.activatable(ctx, to); err != nil {
		h.fail(w, r, err)
		return
	}
	from, _, err := h.corpus.Rollback(ctx, to, principal(r).Actor())
	h.activated(w, r, to, from, err)
}
