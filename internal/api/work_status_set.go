package api

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/store"
)

type workStatusRequest struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// workStatusSet quarantines a work (keeps it out of every release from the
// next build on) or lets a quarantined work back in. The reason goes into
// the work's provenance and the audit trail, in the same transaction. A
// work frozen by a takedown or merged by a person's decision is not
// changed here: those states have their own ways out.
func (h *handler) workStatusSet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	id, err := workIDOf(r)
	if err == nil {
		err = newQuery(r).check()
	}
	var req workStatusRequest
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req.Reason = strings.TrimSpace(req.Reason)
	switch {
	case req.Status != store.WorkActive && req.Status != store.WorkQuarantined:
		h.fail(w, r, invalid("status %q: use active or quarantined", printable(req.Status)))
		return
	case req.Status == store.WorkQuarantined && req.Reason == "":
		h.fail(w, r, invalid("reason: say why the work is quarantined; it is kept in its provenance and the audit trail"))
		return
	case utf8.RuneCountInString(req.Reason) > 500:
		h.fail(w, r, invalid("reason: at most 500 characters"))
		return
	}
	ctx := r.Context()
	cur, err := h.st.CorpusWork(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = notFoundf("no work %s", id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	switch cur.Status {
	case store.WorkFrozen:
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"work %s is frozen because its source asked for a takedown (%s); it is not released again from here", id, cur.StatusReason))
		return
	case store.WorkMerged:
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"work %s was decided to be the same work as %s; change that work instead", id, cur.MergedInto))
		return
	case req.Status:
		h.fail(w, r, errorf(http.StatusConflict, "conflict", "work %s is %s already; nothing changed", id, req.Status))
		return
	}
	if err := h.st.SetCorpusWorkStatus(ctx, id, req.Status, "", req.Reason, principal(r).Actor()); err != nil {
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
