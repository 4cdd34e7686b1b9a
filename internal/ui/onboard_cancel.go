package ui

import "net/http"

// onboardCancel stops a running run; what it finished is kept and shown.
func (c *console) onboardCancel(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	// The job working the run, in whichever process, sees it within a
	// second and ends the run with what it has.
	if _, err := c.store.CancelOnboardRun(r.Context(), run.ID); err != nil {
		c.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"/onboard/"+run.ID, http.StatusSeeOther)
}
