package api

import "net/http"

// siteList lists every site by site_code.
func (h *handler) siteList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	role := q.oneOf("site_role", siteRoles...)
	enabled := q.boolean("enabled")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	sites, err := h.st.ListSites(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[siteView]{Items: []siteView{}}
	for i := range sites {
		s := &sites[i]
		if (role != "" && s.SiteRole != role) || (enabled != nil && s.Enabled != *enabled) {
			continue
		}
		out.Items = append(out.Items, siteOf(s))
	}
	h.ok(w, r, out)
}
