package ui

import (
	"errors"
	"fmt"
	"net/http"

	"zhizhi/internal/auth"
)

// logout ends the session; only ever by POST, so a link or an image on
// another page cannot sign someone out.
func (c *console) logout(w http.ResponseWriter, r *http.Request) {
	if !c.plainForm(w, r) {
		return
	}
	if err := c.sessions.Logout(w, r); err != nil && !errors.Is(err, auth.ErrUnauthenticated) {
		c.serverError(w, r, fmt.Errorf("logout: %w", err))
		return
	}
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}
