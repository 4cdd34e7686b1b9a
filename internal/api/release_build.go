package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/store"
)

type releaseBuilt struct {
	releaseView
	// FrozenByTakedowns counts the works a carried-out takedown froze on
	// the way (they are held back from this release and every later one).
	FrozenByTakedowns int `json:"frozen_by_takedowns"`
}

// releaseBuild writes a new, immutable release of every work that may be
// published (201) and records it as built, audited. It is not active and
// not verified yet: verify it, then an admin activates it.
func (h *handler) releaseBuild(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &struct{}{})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	res, err := h.corpus.Build(ctx, principal(r).Actor(), nil)
	if errors.Is(err, store.ErrCorpusRace) {
		err = errorf(http.StatusConflict, "conflict", "another release was built at the same moment; ask again")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.release(ctx, res.Version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusCreated, releaseBuilt{releaseView: *v, FrozenByTakedowns: res.Frozen})
}
