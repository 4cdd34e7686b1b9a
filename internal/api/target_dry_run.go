package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/target"
)

// targetDryRun runs the dry-run of a stored target (no body, or a patch
// that changes nothing) or of the change a patch would make, and saves
// nothing.
func (h *handler) targetDryRun(w http.ResponseWriter, r *http.Request) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	patch, empty, err := decodePatch(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	var res *target.Result
	if empty || patch == (target.Patch{}) {
		d, err := h.targets.DryRunTarget(ctx, t.TargetCode)
		if err != nil {
			h.failTarget(w, r, nil, err, nil)
			return
		}
		res = &target.Result{Target: t, DryRun: d}
	} else {
		res, err = h.targets.PreviewUpdate(ctx, t.TargetCode, patch)
		if err != nil && !(errors.Is(err, target.ErrDryRunFailed) && res != nil) {
			h.failTarget(w, r, res, err, nil)
			return
		}
	}
	h.ok(w, r, targetPreviewOf(res))
}
