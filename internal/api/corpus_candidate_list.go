package api

import (
	"net/http"

	"zhizhi/internal/store"
)

const candidateCursor = "k1"

// corpusCandidateList is the review queue of possible duplicates, newest
// first: open ones by default, or status=same|different|all. The system
// never merges on its own; a person decides each.
func (h *handler) corpusCandidateList(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	q := newQuery(r)
	status := q.oneOf("status", candidateStatuses...)
	before := q.cursor(candidateCursor)
	limit := q.limit()
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	switch status {
	case "":
		status = store.CandidateOpen
	case "all":
		status = ""
	}
	rows, err := h.st.CorpusCandidatesPage(r.Context(), status, before, limit+1)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := page[candidateView]{Items: []candidateView{}}
	for i := range rows[:min(limit, len(rows))] {
		out.Items = append(out.Items, candidateOf(&rows[i]))
	}
	if len(rows) > limit {
		c := encodePageCursor(candidateCursor, rows[limit-1].ID)
		out.NextCursor = &c
	}
	h.ok(w, r, out)
}
