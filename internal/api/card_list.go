package api

import (
	"net/http"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

const cardCursor = "c1"

var cardGrades = []string{model.GradeGreen, model.GradeYellow, model.GradeRed}

// cardPage is a page of cards with how many match in all.
type cardPage struct {
	Items      []cardView `json:"items"`
	Total      int        `json:"total"`
	NextCursor *string    `json:"next_cursor"`
}

// cardList finds summary cards, newest first (publish time, else fetch
// time). Cards are ordered by a time that is not unique, so the cursor
// carries the position: a card stored while a client pages may shift one
// row between pages.
func (h *handler) cardList(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	cq := store.CardQuery{Grade: q.oneOf("grade", cardGrades...), SiteID: q.id("site_id"), DeptID: q.id("dept_id"),
		Q: q.text("q"), Limit: q.limit(), Offset: int(q.cursor(cardCursor))}
	public := q.boolean("public")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if public != nil {
		if !*public {
			h.fail(w, r, invalid("query parameter \"public\": only true filters; leave it out for every card"))
			return
		}
		cq.Public = true
	}
	cards, total, err := h.st.ListCards(r.Context(), cq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := cardPage{Items: []cardView{}, Total: total}
	for i := range cards {
		out.Items = append(out.Items, cardOf(&cards[i]))
	}
	if next := cq.Offset + len(cards); len(cards) == cq.Limit && next < total {
		c := encodePageCursor(cardCursor, int64(next))
		out.NextCursor = &c
	}
	h.ok(w, r, out)
}
