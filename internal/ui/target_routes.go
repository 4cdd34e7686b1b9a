package ui

import (
	"net/http"

	"zhizhi/internal/auth"
)

// targetRoutes adds the pages of targets and of the column catalog: reading
// them is for everyone signed in, changing them for operators.
func (c *console) targetRoutes(mux *http.ServeMux, v, o auth.Role) {
	mux.Handle("GET "+Prefix+"/targets", c.require(v, c.targetList))
	mux.Handle("GET "+Prefix+"/targets/new", c.require(o, c.targetNew))
	mux.Handle("POST "+Prefix+"/targets/new/dry-run", c.require(o, c.targetDryRun))
	mux.Handle("POST "+Prefix+"/targets", c.require(o, c.targetCreate))
	mux.Handle("GET "+Prefix+"/targets/{code}", c.require(v, c.targetShow))
	mux.Handle("GET "+Prefix+"/targets/{code}/edit", c.require(o, c.targetEdit))
	mux.Handle("POST "+Prefix+"/targets/{code}/dry-run", c.require(o, c.targetDryRun))
	mux.Handle("POST "+Prefix+"/targets/{code}", c.require(o, c.targetUpdate))
	mux.Handle("POST "+Prefix+"/targets/{code}/enabled", c.require(o, c.targetSetEnabled))
	mux.Handle("POST "+Prefix+"/targets/{code}/revert", c.require(o, c.targetRevert))
	mux.Handle("GET "+Prefix+"/catalog", c.require(v, c.catalogList))
	mux.Handle("POST "+Prefix+"/catalog/subscribe", c.require(o, c.catalogSubscribe))
	mux.Handle("POST "+Prefix+"/catalog/unsubscribe", c.require(o, c.catalogUnsubscribe))
	mux.Handle("POST "+Prefix+"/catalog/{id}/preview", c.require(o, c.catalogPreview))
}
