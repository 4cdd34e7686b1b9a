package api

import "net/http"

type reasonRequest struct {
	Reason string `json:"reason"`
}

// targetEnable switches a target on.
func (h *handler) targetEnable(w http.ResponseWriter, r *http.Request) {
	h.setEnabled(w, r, true)
}

// setEnabled switches the path's target on or off with the body's reason,
// for targetEnable and targetDisable.
func (h *handler) setEnabled(w http.ResponseWriter, r *http.Request, enabled bool) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req reasonRequest
	if err := decodeJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if _, err := h.targets.SetEnabled(ctx, t.TargetCode, enabled, req.Reason, principal(r).Actor()); err != nil {
		h.failTarget(w, r, nil, err, nil)
		return
	}
	now, err := h.st.TargetByID(ctx, t.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, targetStateView{Target: targetOf(now), Changed: t.Enabled != enabled})
}
