package ui

import (
	"context"
	"net/http"
	"time"

	"zhizhi/internal/model"
)

// takedownRow is a request as the list and the receipt show it.
type takedownRow struct {
	model.Takedown
	ScopeLabel string
	Left       string // time to the deadline, or past it, for an open request
	Overdue    bool   // open and past its deadline
}

// takedownForm is the record form as the person filled it in, kept whole
// when it is refused.
type takedownForm struct {
	SiteID, Scope, URLs, Requester, Contact, Reason string
	FreezeNow                                       bool
	Errors                                          map[string]string // by field name
}

type takedownsData struct {
	Open, Done []takedownRow
	Overdue    int
	Sites      []model.Site
	Form       takedownForm
}

// takedownList shows the open requests first, most urgent first, each with
// the time left to its 48-hour deadline, then the carried-out ones with
// their receipts; operators get the form that records a new request.
func (c *console) takedownList(w http.ResponseWriter, r *http.Request) {
	d, err := c.takedownsData(r.Context(), takedownForm{Scope: model.TakedownURLs})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "takedowns", page{Title: "下架请求", Active: "takedowns", Data: d})
}

func (c *console) takedownsData(ctx context.Context, f takedownForm) (takedownsData, error) {
	d := takedownsData{Form: f}
	list, err := c.store.ListTakedowns(ctx, false)
	if err != nil {
		return d, err
	}
	now := c.now()
	for _, k := range list {
		row := c.takedownRow(k, now)
		if k.Open() {
			d.Open = append(d.Open, row)
			if row.Overdue {
				d.Overdue++
			}
		} else {
			d.Done = append(d.Done, row)
		}
	}
	if d.Sites, err = c.store.ListSites(ctx); err != nil {
		return d, err
	}
	return d, nil
}

func (c *console) takedownRow(k model.Takedown, now time.Time) takedownRow {
	row := takedownRow{Takedown: k, ScopeLabel: scopeLabel(k.Scope)}
	if k.Open() {
		row.Left, row.Overdue = timeLeft(now, k.DeadlineAt)
	}
	return row
}
