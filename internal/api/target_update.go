package api

import "net/http"

// targetUpdate changes the fields a merge patch gives, behind the dry-run
// gate when the target has a sample article after the change.
func (h *handler) targetUpdate(w http.ResponseWriter, r *http.Request) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	patch, _, err := decodePatch(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	res, err := h.targets.Update(ctx, t.TargetCode, patch, principal(r).Actor())
	if err != nil {
		h.failTarget(w, r, res, err, nil)
		return
	}
	now, err := h.st.TargetByID(ctx, t.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, targetSavedView{Target: targetOf(now), Saved: res.Saved, DryRun: dryRunOf(res.DryRun),
		Warnings: orEmpty(res.Warnings), Changed: orEmpty(res.Changed)})
}
