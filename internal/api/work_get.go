package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// workGet answers one work: its state, its current revision, why it is
// held back, its aliases, and which revision the active release holds.
func (h *handler) workGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	id, err := workIDOf(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.workDetail(r, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, v)
}

func (h *handler) workDetail(r *http.Request, id string) (*workDetailView, error) {
	ctx := r.Context()
	row, err := h.st.CorpusWorkRow(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundf("no work %s", id)
	}
	if err != nil {
		return nil, err
	}
	aliases, err := h.st.CorpusAliases(ctx, id)
	if err != nil {
		return nil, err
	}
	if aliases == nil {
		aliases = []string{}
	}
	v := &workDetailView{workView: workOf(row), Revision: revisionOf(&row.Rev), Aliases: aliases}
	rel, err := h.corpus.Active(ctx)
	switch {
	case errors.Is(err, corpus.ErrNoActive):
	case err != nil:
		return nil, err
	default:
		if e, ok := rel.Work(id); ok {
			v.ActiveRelease = &inReleaseView{Release: rel.Version, Rev: e.Rev}
		}
	}
	return v, nil
}
