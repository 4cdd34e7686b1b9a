package api

import (
	"errors"
	"net/http"
	"time"

	"zhizhi/internal/target"
)

// columnPreviewView is the newest list page of a catalog column, read live.
type columnPreviewView struct {
	Column  columnView           `json:"column"`
	ReadAt  *time.Time           `json:"read_at"`
	Problem *string              `json:"problem"`
	Items   []target.PreviewItem `json:"items"`
}

// columnPreview reads the newest page of one catalog column from its site,
// politely, and stores nothing. A site that refuses or does not answer is
// a 200 with the problem; only an unknown column is an error.
func (h *handler) columnPreview(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.targets.PreviewColumn(r.Context(), id)
	switch {
	case errors.Is(err, target.ErrNotFound):
		h.fail(w, r, notFoundf("no catalog column %d", id))
		return
	case errors.Is(err, target.ErrNoLister):
		h.fail(w, r, errorf(http.StatusServiceUnavailable, "preview_unavailable", "this server cannot read columns; preview them from zhizhi serve"))
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	v := columnPreviewView{Column: columnOf(&p.Column.ColumnRegistry), Problem: orNull(p.Problem), Items: p.Items}
	if !p.ReadAt.IsZero() {
		v.ReadAt = &p.ReadAt
	}
	if v.Items == nil {
		v.Items = []target.PreviewItem{}
	}
	h.ok(w, r, v)
}
