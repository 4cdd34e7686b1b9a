package api

import "net/http"

// targetProvenanceGet says, for each changeable field of a target, its
// value and whether it comes from the site files, a person's override (who,
// when, and what the files say) or the console.
func (h *handler) targetProvenanceGet(w http.ResponseWriter, r *http.Request) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	fields, err := h.targets.Provenance(r.Context(), t.TargetCode)
	if err != nil {
		h.failTarget(w, r, nil, err, nil)
		return
	}
	out := list[fieldSourceView]{Items: []fieldSourceView{}}
	for _, f := range fields {
		out.Items = append(out.Items, fieldSourceView{Field: f.Field, Value: f.Value, Source: f.Source,
			ChangedBy: orNull(f.ChangedBy), ChangedAt: f.ChangedAt, YAMLValue: f.YAMLValue})
	}
	h.ok(w, r, out)
}
