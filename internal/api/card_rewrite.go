package api

import (
	"errors"
	"net/http"
	"strings"

	"zhizhi/internal/review"
	"zhizhi/internal/store"
)

// CardGrader grades a person's rewrite of a summary card (see
// review.Grader); zhizhi serve passes the summary gates' own.
type CardGrader = review.Grader

type rewriteRequest struct {
	Summary string `json:"summary"`
}

// cardRewrite grades a new summary for a card and saves it, audited, only
// when it grades green; a yellow or red one is refused with 422 naming its
// σ and the anchors it misses.
func (h *handler) cardRewrite(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	var req rewriteRequest
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	saved, err := review.Rewrite(r.Context(), h.st, h.cards, id, req.Summary, principal(r).Actor())
	var (
		textErr  *review.TextError
		notGreen *review.NotGreen
	)
	switch {
	case err == nil:
		h.ok(w, r, h.cardDetailOf(saved))
	case errors.Is(err, store.ErrNotFound):
		h.fail(w, r, notFoundf("no card with id %d", id))
	case errors.Is(err, review.ErrNoGrader):
		h.fail(w, r, errorf(http.StatusServiceUnavailable, "unavailable",
			"this server grades no rewrites (it was started without the card grader); nothing was saved"))
	case errors.Is(err, review.ErrFrozen):
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"card %d is taken down at its site's request (takedown %d); a frozen card is not rewritten", id, *saved.TakedownID))
	case errors.As(err, &textErr):
		h.fail(w, r, invalid("summary: %s", textErr.Msg))
	case errors.As(err, &notGreen):
		var names []string
		for _, a := range notGreen.Missing {
			names = append(names, a.Text)
		}
		detail := err.Error() + "; nothing was saved"
		if len(names) > 0 {
			detail += "; add the missing anchors: " + strings.Join(names, ", ")
		}
		h.writeJSON(w, r, http.StatusUnprocessableEntity, rewriteRefusal{Error: "not_green", Detail: detail,
			Grade: notGreen.Grade, Sigma: notGreen.Sigma, Covered: notGreen.Covered, Total: notGreen.Total,
			MissingAnchors: anchorsOf(notGreen.Missing)})
	default:
		h.fail(w, r, err)
	}
}
