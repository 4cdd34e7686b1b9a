package ui

import "net/http"

// targetNew is the empty form for a new target; ?site= preselects a site.
func (c *console) targetNew(w http.ResponseWriter, r *http.Request) {
	f := &targetForm{SiteCode: r.URL.Query().Get("site"), Schedule: "daily", ExpectedCadenceDays: "7",
		IntervalSec: "0", Enabled: true}
	c.renderTargetForm(w, r, http.StatusOK, f, "")
}
