package api

import (
	"net/http"

	"zhizhi/internal/model"
	"zhizhi/internal/review"
)

// cardGet is one card with the core anchors its summary misses.
func (h *handler) cardGet(w http.ResponseWriter, r *http.Request) {
	getOne(h, w, r, "card", h.st.CardByID, h.cardDetailOf)
}

func (h *handler) cardDetailOf(c *model.SummaryCard) cardDetailView {
	return cardDetailView{cardView: cardOf(c), MissingAnchors: anchorsOf(review.Missing(c, h.cards))}
}
