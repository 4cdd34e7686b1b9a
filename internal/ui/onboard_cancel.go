package ui

import "net/http"

// onboardCancel stops a running run; what it finished is kept and shown.
func (c *console) onboardCancel(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	run.cancel()
	http.Redirect(w, r, Prefix+"/onboard/"+run.ID, http.StatusSeeOther)
}
