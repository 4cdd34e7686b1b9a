package api

import (
	"net/http"

	"zhizhi/internal/store"
)

// columnList lists the column registry: every column the CMS adapters have
// seen, by admin level, topic tag, subscription, site and adapter.
func (h *handler) columnList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	f := store.ColumnFilter{Tag: q.text("tag"), AdminLevel: q.oneOf("admin_level", adminLevels...)}
	subscribed := q.boolean("subscribed")
	active := q.boolean("active")
	siteID := q.id("site_id")
	adapter := q.text("adapter_id")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if subscribed != nil {
		f.SubscribedOnly, f.UnsubscribedOnly = *subscribed, !*subscribed
	}
	if active != nil && *active {
		f.ActiveOnly = true
	}
	if siteID != nil {
		f.SiteID = *siteID
	}
	f.AdapterID = adapter
	cols, err := h.st.ListColumns(r.Context(), f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[columnView]{Items: []columnView{}}
	for i := range cols {
		c := &cols[i]
		if active != nil && !*active && c.Active { // retired columns only: no store filter for that
			continue
		}
		out.Items = append(out.Items, columnOf(c))
	}
	h.ok(w, r, out)
}
