package api

import "net/http"

// releaseList lists the corpus releases, newest first, the active one
// marked. Releases are few (one a day at most, usually): the list is not
// paged.
func (h *handler) releaseList(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	rels, err := h.st.CorpusReleases(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[releaseView]{Items: []releaseView{}}
	for i := range rels {
		out.Items = append(out.Items, releaseOf(&rels[i]))
	}
	h.ok(w, r, out)
}
