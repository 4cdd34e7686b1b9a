package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/review"
)

type takedownRequest struct {
	SiteID    int64    `json:"site_id"`
	Scope     string   `json:"scope"`
	URLs      []string `json:"urls"`
	Requester string   `json:"requester"`
	Contact   string   `json:"contact"`
	Reason    string   `json:"reason"`
	FreezeNow bool     `json:"freeze_now"`
}

// takedownCreate records a site's request as it arrives — its 48-hour
// deadline runs from now — and, with freeze_now, carries it out at once.
// A refused field records nothing (400, each field named).
func (h *handler) takedownCreate(w http.ResponseWriter, r *http.Request) {
	var req takedownRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	k, err := review.RecordTakedown(r.Context(), h.st, review.TakedownRequest{SiteID: req.SiteID, Scope: req.Scope,
		URLs: req.URLs, Requester: req.Requester, Contact: req.Contact, Reason: req.Reason, ReceivedAt: h.now(),
		RecordedBy: principal(r).Actor(), FreezeNow: req.FreezeNow})
	var bad *review.InputError
	if errors.As(err, &bad) {
		fields := make([]fieldProblem, len(bad.Problems))
		for i, p := range bad.Problems {
			fields[i] = fieldProblem{Field: p.Field, Message: p.Message}
		}
		h.failFields(w, r, http.StatusBadRequest, "invalid_request", fields)
		return
	}
	if err != nil {
		// A request recorded whose freeze failed stays open; the log has
		// its id, and a client lists it with GET /api/v1/takedowns?open=true.
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusCreated, takedownOf(k, h.now()))
}
