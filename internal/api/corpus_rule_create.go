package api

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/store"
)

type intakeRuleRequest struct {
	Name        string   `json:"name"`
	TargetCodes []string `json:"target_codes"`
	Enabled     *bool    `json:"enabled"`
}

// corpusRuleCreate records an intake rule (201), audited: from now on
// serve takes in every ready article of its targets (every target when
// none) of full-access sites after each crawl.
func (h *handler) corpusRuleCreate(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	var req intakeRuleRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	switch {
	case req.Name == "":
		h.fail(w, r, invalid("name: give the rule a name people will recognise"))
		return
	case utf8.RuneCountInString(req.Name) > 100:
		h.fail(w, r, invalid("name: at most 100 characters"))
		return
	case len(req.TargetCodes) > maxIntakeTargets:
		h.fail(w, r, invalid("target_codes: at most %d", maxIntakeTargets))
		return
	}
	if err := h.checkTargetCodes(r, req.TargetCodes); err != nil {
		h.fail(w, r, err)
		return
	}
	rule := &store.CorpusIntakeRule{Name: req.Name, TargetCodes: req.TargetCodes, Enabled: req.Enabled == nil || *req.Enabled,
		CreatedBy: principal(r).Actor()}
	if err := h.st.CreateCorpusIntakeRule(r.Context(), rule); err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusCreated, intakeRuleOf(rule))
}
