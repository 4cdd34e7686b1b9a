package api

import "net/http"

// takedownList lists requests: the open ones first, most urgent first,
// then the carried-out ones newest first. open=true keeps the open ones,
// open=false the carried-out ones.
func (h *handler) takedownList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	open := q.boolean("open")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	tds, err := h.st.ListTakedowns(r.Context(), open != nil && *open)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := list[takedownView]{Items: []takedownView{}}
	for i := range tds {
		if open != nil && tds[i].Open() != *open {
			continue
		}
		out.Items = append(out.Items, takedownOf(&tds[i], now))
	}
	h.ok(w, r, out)
}
