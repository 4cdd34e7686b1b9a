package api

import (
	"errors"
	"net/http"
	"time"

	"zhizhi/internal/store"
)

type activeReleaseView struct {
	releaseView
	Previous    *string   `json:"previous"`
	ActivatedBy string    `json:"activated_by"`
	ActivatedAt time.Time `json:"activated_at"`
}

// releaseActiveGet answers the release readers, search and agents answer
// from now, and the one active before it (where a rollback returns).
func (h *handler) releaseActiveGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	act, err := h.st.ActiveCorpusRelease(ctx)
	if errors.Is(err, store.ErrNotFound) {
		err = noActive
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.release(ctx, act.Version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, activeReleaseView{releaseView: *v, Previous: orNull(act.Previous), ActivatedBy: act.ActivatedBy,
		ActivatedAt: act.ActivatedAt})
}
