package api

import (
	"net/http"

	"zhizhi/internal/store"
)

const crawlLogCursor = "l1"

// crawlLogList lists requests zhizhi made, newest first, a page at a time.
func (h *handler) crawlLogList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	lq := store.CrawlLogQuery{
		SiteID:   q.id("site_id"),
		TargetID: q.id("target_id"),
		Host:     q.text("host"),
		Purpose:  q.text("purpose"),
		From:     q.instant("from"),
		To:       q.instant("to"),
		BeforeID: q.cursor(crawlLogCursor),
		Limit:    q.limit(),
	}
	switch q.oneOf("status", logOutcomes...) {
	case "success":
		ok := true
		lq.Success = &ok
	case "failure":
		ok := false
		lq.Success = &ok
	}
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if lq.From != nil && lq.To != nil && !lq.From.Before(*lq.To) {
		h.fail(w, r, invalid("from must be before to"))
		return
	}
	want := lq.Limit
	lq.Limit = want + 1
	rows, err := h.st.QueryCrawlLogs(r.Context(), lq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := page[crawlLogView]{Items: []crawlLogView{}}
	for i := range rows[:min(want, len(rows))] {
		out.Items = append(out.Items, crawlLogOf(&rows[i]))
	}
	if len(rows) > want {
		c := encodePageCursor(crawlLogCursor, rows[want-1].ID)
		out.NextCursor = &c
	}
	h.ok(w, r, out)
}
