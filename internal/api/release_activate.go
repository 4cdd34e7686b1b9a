package api

import (
	"context"
	"errors"
	"net/http"

	"zhizhi/internal/store"
)

type activationView struct {
	Active   releaseView `json:"active"`
	Previous *string     `json:"previous"`
}

// releaseActivate makes a verified release the one every reader, search
// and agent answers from (admins only), after checking its files once more;
// the pointer moves in one transaction with its audit entry, so a reader
// sees the old release or the new one, never neither.
func (h *handler) releaseActivate(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	version := r.PathValue("version")
	err := versionOf("path", version)
	if err == nil {
		err = newQuery(r).check()
	}
	if err == nil {
		err = decodeJSON(w, r, &struct{}{})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if err := h.activatable(ctx, version); err != nil {
		h.fail(w, r, err)
		return
	}
	prev, err := h.corpus.Activate(ctx, version, principal(r).Actor())
	h.activated(w, r, version, prev, err)
}

// activatable refuses, before anything moves, a release that cannot be
// activated: absent (404), not verified or already active (409).
func (h *handler) activatable(ctx context.Context, version string) error {
	rel, err := h.release(ctx, version)
	if err != nil {
		return err
	}
	switch {
	case rel.Active:
		return errorf(http.StatusConflict, "conflict", "release %s is active already; nothing changed", version)
	case rel.State == store.ReleaseBuilt:
		return errorf(http.StatusConflict, "conflict", "release %s is not verified yet: POST /api/v1/releases/%s/verify first", version, version)
	case rel.State != store.ReleaseVerified:
		return errorf(http.StatusConflict, "conflict", "release %s is %s and can never be activated (%s)", version, rel.State, rel.VerifyError)
	}
	return nil
}

// activated answers an activation or rollback to version: the release now
// active and the one before it; 422 when the last check found it damaged.
func (h *handler) activated(w http.ResponseWriter, r *http.Request, version, prev string, err error) {
	if h.damaged(w, r, err) {
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		err = notFoundf("no release %s", version)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.release(r.Context(), version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, activationView{Active: *v, Previous: orNull(prev)})
}
