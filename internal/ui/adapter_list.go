package ui

import (
	"context"
	"net/http"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type adapterRow struct {
	*config.Adapter
	Sites      []model.Site // sites in the database that use the adapter
	Columns    int          // columns it found (active)
	Subscribed int          // of those, how many a target collects
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
	rows := make([]adapterRow, 0, len(list))
	for _, a := range list {
		row := adapterRow{Adapter: a}
		for _, s := range sites {
			if s.CMSAdapter == a.AdapterID {
				row.Sites = append(row.Sites, s)
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
