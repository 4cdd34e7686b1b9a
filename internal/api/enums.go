package api

import (
	"errors"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

var (
	siteRoles     = model.SiteRoles
	deptBindings  = model.DeptBindings
	articleStatus = []string{model.StatusRaw, model.StatusReady, model.StatusFailed}
	adminLevels   = []string{"city", "county", "township"}
	logOutcomes   = []string{"success", "failure"}
)

// notFoundOr turns the store's ErrNotFound into a 404 saying what was
// missing, and passes any other error on.
func notFoundOr(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFoundf(format, args...)
	}
	return err
}
