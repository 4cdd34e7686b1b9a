package api

import (
	"net/http"

	"zhizhi/internal/articlejson"
	"zhizhi/internal/store"
)

const articleCursor = "a1"

// articleList finds articles by the filters RAG users search with, newest
// first, a page at a time.
func (h *handler) articleList(w http.ResponseWriter, r *http.Request) {
	h.articlePage(w, r, false)
}

// articleUnexportedList lists the articles RAG has not pulled yet.
func (h *handler) articleUnexportedList(w http.ResponseWriter, r *http.Request) {
	h.articlePage(w, r, true)
}

func (h *handler) articlePage(w http.ResponseWriter, r *http.Request, unexported bool) {
	q := newQuery(r)
	aq := store.ArticleQuery{
		DeptID:      q.id("dept_id"),
		ChannelPath: q.text("channel_path"),
		Publisher:   q.text("publisher"),
		TopicWord:   q.text("topic_words"),
		DocNo:       q.text("doc_no"),
		Status:      q.oneOf("status", articleStatus...),
		DateFrom:    q.date("date_from"),
		DateTo:      q.date("date_to"),
		SiteID:      q.id("site_id"),
		TargetID:    q.id("target_id"),
		NotExported: unexported,
		BeforeID:    q.cursor(articleCursor),
		Limit:       q.limit(),
	}
	ext := q.boolean("external_ref")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if aq.DateFrom != "" && aq.DateTo != "" && aq.DateFrom > aq.DateTo {
		h.fail(w, r, invalid("date_from %s is after date_to %s; swap them", aq.DateFrom, aq.DateTo))
		return
	}
	if ext != nil {
		if !*ext {
			h.fail(w, r, invalid("query parameter \"external_ref\": only true filters; leave it out for every article"))
			return
		}
		if aq.DeptID != nil {
			h.fail(w, r, invalid("external_ref=true means articles of no local department; it cannot be combined with dept_id"))
			return
		}
		aq.ExternalRef = true
	}
	// One row more than the page tells whether another page follows.
	want := aq.Limit
	aq.Limit = want + 1
	rows, err := h.st.QueryArticles(r.Context(), aq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := page[articleItem]{Items: []articleItem{}}
	for i := range rows[:min(want, len(rows))] {
		out.Items = append(out.Items, articleItem{articlejson.SummaryOf(&rows[i]), exportMark{rows[i].ExportedToRAGAt}})
	}
	if len(rows) > want {
		c := encodePageCursor(articleCursor, rows[want-1].ID)
		out.NextCursor = &c
	}
	h.ok(w, r, out)
}
