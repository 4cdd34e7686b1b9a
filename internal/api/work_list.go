package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/store"
)

// workList lists the corpus's works by id, a page at a time, each with
// why it is held back from a release (none when it may be published).
// Filters: status, q (in the title, or the whole id), site (a site code).
func (h *handler) workList(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	q := newQuery(r)
	f := store.CorpusWorkFilter{Status: q.oneOf("status", workStatuses...), Q: q.text("q"),
		After: q.keyCursor(workCursor, workIDRE.MatchString), Limit: q.limit()}
	site := q.text("site")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if site != "" {
		s, err := h.st.SiteByCode(r.Context(), site)
		if errors.Is(err, store.ErrNotFound) {
			h.fail(w, r, invalid("query parameter \"site\": no site with code %q; GET /api/v1/sites lists them", printable(site)))
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		f.SiteID = s.ID
	}
	// One row more than the page tells whether another page follows.
	want := f.Limit
	f.Limit = want + 1
	rows, err := h.st.ListCorpusWorks(r.Context(), f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := page[workView]{Items: []workView{}}
	for i := range rows[:min(want, len(rows))] {
		out.Items = append(out.Items, workOf(&rows[i]))
	}
	if len(rows) > want {
		c := encodeKeyCursor(workCursor, rows[want-1].ID)
		out.NextCursor = &c
	}
	h.ok(w, r, out)
}
