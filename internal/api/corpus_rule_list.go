package api

import "net/http"

// corpusRuleList lists the intake rules: people's standing orders to take
// the ready articles of some targets (every target when none) of
// full-access sites into the corpus.
func (h *handler) corpusRuleList(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	rules, err := h.st.CorpusIntakeRules(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[intakeRuleView]{Items: []intakeRuleView{}}
	for i := range rules {
		out.Items = append(out.Items, intakeRuleOf(&rules[i]))
	}
	h.ok(w, r, out)
}
