package api

import "net/http"

// siteGet returns one site.
func (h *handler) siteGet(w http.ResponseWriter, r *http.Request) {
	getOne(h, w, r, "site", h.st.SiteByID, siteOf)
}
