package ui

import (
	"context"
	"net/http"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type adapterRow struct {
	*config.Adapter
	Sites      []model.Site // sites in the database that use the adapter
	Columns    int          // columns it found (active)
	Subscribed int          // of those, how many a target collects
	// Checks are the last detection results of those sites (a site never
	// checked has none); LastChecked is the newest of them.
	Checks      []store.AdapterCheck
	LastChecked time.Time
}

// CheckState sums the last detection up: "" (never run), "ok" (every site
// still shows the adapter), "partial" (some sites not checked since they
// joined) or "failed" (a site no longer shows it, or could not be read).
func (a adapterRow) CheckState() string {
	if len(a.Checks) == 0 {
		return ""
	}
	for _, c := range a.Checks {
		if !c.Passed() {
			return "failed"
		}
	}
	if len(a.Checks) < len(a.Sites) {
		return "partial"
	}
	return "ok"
}

// FailedChecks counts the sites whose last check did not pass.
func (a adapterRow) FailedChecks() int {
	n := 0
	for _, c := range a.Checks {
		if !c.Passed() {
			n++
		}
	}
	return n
}

// adapterList shows the CMS adapters of the configuration directory with
// the sites each covers and the columns subscribed through it.
func (c *console) adapterList(w http.ResponseWriter, r *http.Request) {
	rows, err := c.adapterRows(r.Context(), adapters(c.bundle()))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "adapters", page{Title: "CMS 适配器", Active: "adapters", Data: rows})
}

func (c *console) adapterRows(ctx context.Context, list []*config.Adapter) ([]adapterRow, error) {
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	cols, err := c.store.ListColumns(ctx, store.ColumnFilter{ActiveOnly: true})
	if err != nil {
		return nil, err
	}
	checks, err := c.store.AdapterChecks(ctx, "")
	if err != nil {
		return nil, err
	}
	rows := make([]adapterRow, 0, len(list))
	for _, a := range list {
		row := adapterRow{Adapter: a}
		uses := map[int64]bool{}
		for _, s := range sites {
			if s.CMSAdapter == a.AdapterID {
				row.Sites = append(row.Sites, s)
				uses[s.ID] = true
			}
		}
		// A check of a site that has since moved to another adapter is
		// history, not this adapter's state.
		for _, ch := range checks {
			if ch.AdapterID == a.AdapterID && uses[ch.SiteID] {
				row.Checks = append(row.Checks, ch)
				if ch.CheckedAt.After(row.LastChecked) {
					row.LastChecked = ch.CheckedAt
				}
			}
		}
		for _, col := range cols {
			if col.AdapterID == a.AdapterID {
				row.Columns++
				if col.SubscribedTargetID != nil {
					row.Subscribed++
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}
