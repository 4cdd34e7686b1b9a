package api

import (
	"errors"
	"fmt"
	"net/http"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

type verifyRequest struct {
	// Quick checks the release's own files only, not its works' snapshots.
	Quick bool `json:"quick"`
}

type verifyProblemView struct {
	Where string `json:"where"`
	What  string `json:"what"`
}

// verifyRefusal is the 422 of a damaged release: the error envelope and
// every problem found.
type verifyRefusal struct {
	Error    string              `json:"error"`
	Detail   string              `json:"detail"`
	Problems []verifyProblemView `json:"problems"`
}

// releaseVerify re-reads a release: its manifest against the SHA-256 the
// database recorded at build time, every file against the manifest, every
// text against its work's revision, and (unless quick) every work's
// snapshot. Intact: 200 and the release, now verified. Damaged: 422 with
// every problem; the release is marked failed for good and can never be
// activated. The verification is audited either way.
func (h *handler) releaseVerify(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	version := r.PathValue("version")
	err := versionOf("path", version)
	if err == nil {
		err = newQuery(r).check()
	}
	var req verifyRequest
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	cur, err := h.release(ctx, version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if cur.State == store.ReleaseFailed {
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"release %s failed verification before (%s); a failed release stays failed: build a new one", version, cur.VerifyError))
		return
	}
	err = h.corpus.Verify(ctx, version, principal(r).Actor(), corpus.VerifyOptions{SkipSnapshots: req.Quick}, nil)
	if h.damaged(w, r, err) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.release(ctx, version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, v)
}

// damaged answers 422 with every problem when err says a release is
// damaged, and reports whether it did.
func (h *handler) damaged(w http.ResponseWriter, r *http.Request, err error) bool {
	var verr *corpus.VerifyError
	if !errors.As(err, &verr) {
		return false
	}
	out := verifyRefusal{Error: "verify_failed", Problems: []verifyProblemView{},
		Detail: fmt.Sprintf("release %s is damaged (%d problems); it is marked failed and can never be activated: build a new one",
			verr.Version, len(verr.Problems))}
	for _, p := range verr.Problems {
		out.Problems = append(out.Problems, verifyProblemView{Where: p.Where, What: p.What})
	}
	h.writeJSON(w, r, http.StatusUnprocessableEntity, out)
	return true
}
