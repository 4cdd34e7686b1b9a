package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// workPageSize is how many works one page of the list shows.
const workPageSize = 50

type workRow struct {
	store.CorpusWorkRow
	Held [][]segment // why it is held back from a release, each reason cut around the ids it names
}

type workListData struct {
	Status, Q string
	Statuses  any
	Rows      []workRow
	NextURL   string
	FirstURL  string
}

// corpusWorkList lists works by id, filtered by status and a title word
// (or a work id), each with why it is held back from a release now.
func (c *console) corpusWorkList(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-works") {
		return
	}
	q := r.URL.Query()
	d := workListData{Status: q.Get("status"), Q: strings.TrimSpace(q.Get("q")), Statuses: workStatuses}
	if d.Status != "" && !slices.ContainsFunc(workStatuses, func(s struct{ Value, Label string }) bool { return s.Value == d.Status }) {
		c.render(w, r, http.StatusBadRequest, "corpus_works", page{Title: "作品", Active: "corpus-works",
			Error: "状态筛选无效，请从列表中选择。", Data: d})
		return
	}
	filter := url.Values{}
	if d.Status != "" {
		filter.Set("status", d.Status)
	}
	if d.Q != "" {
		filter.Set("q", d.Q)
	}
	after := q.Get("after")
	if after != "" {
		d.FirstURL = listURL("/corpus/works", filter)
	}
	rows, err := c.store.ListCorpusWorks(r.Context(), store.CorpusWorkFilter{Status: d.Status, Q: d.Q, After: after, Limit: workPageSize + 1})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if len(rows) > workPageSize {
		rows = rows[:workPageSize]
		next := url.Values{}
		for k, v := range filter {
			next[k] = v
		}
		next.Set("after", rows[len(rows)-1].ID)
		d.NextURL = listURL("/corpus/works", next)
	}
	for i := range rows {
		row := workRow{CorpusWorkRow: rows[i]}
		for _, why := range corpus.HeldReasons(&rows[i]) {
			row.Held = append(row.Held, idSegments(why))
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "corpus_works", page{Title: "作品", Active: "corpus-works", Data: d})
}
