package api

import (
	"net/http"

	"zhizhi/internal/store"
)

type decisionRequest struct {
	Decision string `json:"decision"`
}

// corpusCandidateDecide records a person's decision on a duplicate
// candidate: same (the second work is merged into the first and leaves
// releases) or different (both stay). Both works' provenance and the audit
// trail record it in one transaction; a decided candidate is not decided
// again (409).
func (h *handler) corpusCandidateDecide(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	k, err := byPath(r, h.st.CorpusCandidate, "no duplicate candidate with id %d")
	var req decisionRequest
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Decision != store.CandidateSame && req.Decision != store.CandidateDifferent {
		h.fail(w, r, invalid("decision %q: use same (one work) or different (two works)", printable(req.Decision)))
		return
	}
	if k.Status != store.CandidateOpen {
		h.fail(w, r, errorf(http.StatusConflict, "conflict", "candidate %d was already decided (%s by %s); nothing changed",
			k.ID, k.Status, k.DecidedBy))
		return
	}
	ctx := r.Context()
	if err := h.st.DecideCorpusCandidate(ctx, k.ID, req.Decision, principal(r).Actor()); err != nil {
		// Decided by someone else between the read and the write.
		if again, gerr := h.st.CorpusCandidate(ctx, k.ID); gerr == nil && again.Status != store.CandidateOpen {
			err = errorf(http.StatusConflict, "conflict", "candidate %d was decided meanwhile (%s by %s); nothing changed",
				k.ID, again.Status, again.DecidedBy)
		}
		h.fail(w, r, err)
		return
	}
	k, err = h.st.CorpusCandidate(ctx, k.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, candidateOf(k))
}
