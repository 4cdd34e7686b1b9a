package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// Bounds of one intake request.
const (
	maxIntakeArticles = 500
	maxIntakeTargets  = 100
)

type intakeRequest struct {
	ArticleIDs  []int64  `json:"article_ids"`
	TargetCodes []string `json:"target_codes"`
	Rules       bool     `json:"rules"`
}

// corpusIntake copies articles into the corpus, a person's explicit
// action: the listed articles (any site: a summary site's snapshot holds
// only what the crawler was allowed to read), every ready article of the
// listed targets' full-access sites, or — with rules — what every enabled
// intake rule selects. It answers what it did; an article that could not
// be taken in is listed in failures, and the others are kept. The request
// and its counts go into the audit trail; each work's provenance names the
// caller.
func (h *handler) corpusIntake(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	var req intakeRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	given := 0
	for _, b := range []bool{len(req.ArticleIDs) > 0, len(req.TargetCodes) > 0, req.Rules} {
		if b {
			given++
		}
	}
	if given != 1 {
		h.fail(w, r, invalid("give exactly one of article_ids (a list of article ids), target_codes (a list of target codes) or rules: true"))
		return
	}
	if len(req.ArticleIDs) > maxIntakeArticles {
		h.fail(w, r, invalid("article_ids: at most %d per request, got %d; send them in batches", maxIntakeArticles, len(req.ArticleIDs)))
		return
	}
	if len(req.TargetCodes) > maxIntakeTargets {
		h.fail(w, r, invalid("target_codes: at most %d per request, got %d", maxIntakeTargets, len(req.TargetCodes)))
		return
	}
	for i, id := range req.ArticleIDs {
		if id <= 0 {
			h.fail(w, r, invalid("article_ids[%d]: %d is not an article id (a whole number from 1)", i, id))
			return
		}
	}
	ctx := r.Context()
	actor := principal(r).Actor()
	if err := h.checkTargetCodes(r, req.TargetCodes); err != nil {
		h.fail(w, r, err)
		return
	}
	var sum corpus.RunSummary
	var what string
	switch {
	case req.Rules:
		what = "every enabled intake rule"
		sum, err = h.corpus.RunRules(ctx, nil)
	case len(req.TargetCodes) > 0:
		what = "targets " + strings.Join(req.TargetCodes, ", ")
		sum, err = h.corpus.IntakeTargets(ctx, req.TargetCodes, actor, nil)
	default:
		what = fmt.Sprintf("%d articles", len(req.ArticleIDs))
		for _, id := range req.ArticleIDs {
			res, ierr := h.corpus.IntakeArticle(ctx, id, actor)
			sum.Add(id, res, ierr)
			if ctx.Err() != nil {
				err = ctx.Err()
				break
			}
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := intakeSummaryOf(&sum)
	after, _ := json.Marshal(map[string]int{"looked": v.Looked, "new_works": v.NewWorks, "new_revisions": v.NewRevisions,
		"unchanged": v.Unchanged, "failed_qa": v.FailedQA, "candidates": v.Candidates, "failures": len(v.Failures)})
	if err := h.st.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "corpus.intake", ObjectType: "corpus",
		After: after, Detail: "语料收录：" + what}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, v)
}

// checkTargetCodes refuses (400) a target code that names no target.
func (h *handler) checkTargetCodes(r *http.Request, codes []string) error {
	for i, code := range codes {
		if _, err := h.st.TargetByCode(r.Context(), code); errors.Is(err, store.ErrNotFound) {
			return invalid("target_codes[%d]: no target %q; GET /api/v1/targets lists them", i, printable(code))
		} else if err != nil {
			return err
		}
	}
	return nil
}
