package ui

import (
	"errors"
	"net/http"
	"strconv"

	"zhizhi/internal/model"
	"zhizhi/internal/review"
	"zhizhi/internal/store"
)

type cardData struct {
	C         *model.SummaryCard
	Badge     badge
	Sigma     string
	Total     int
	Missing   []model.CardAnchor
	Frozen    bool
	NoGrader  bool   // the server has no grader: the form is shown disabled
	Text      string // what the textarea holds: the refused text, else the summary
	Refused   *refusedView
	Relevance int
}

// refusedView is what a refused rewrite scored, shown above the form.
type refusedView struct {
	Badge   badge
	Sigma   string
	Covered int
	Total   int
	Missing []model.CardAnchor
}

// cardShow is one card for review: its source, the machine's cut, σ with
// the anchors its summary misses, relevance, and the rewrite form.
func (c *console) cardShow(w http.ResponseWriter, r *http.Request) {
	card, ok := c.cardOfPath(w, r)
	if !ok {
		return
	}
	p := page{}
	// Only a card that was rewritten can be confirmed as saved.
	if r.URL.Query().Get("saved") == "1" && card.RewrittenBy != "" {
		p.Flash = "改写已保存并记入审计日志：评级为绿色，σ = " + fmtSigma(card.Sigma) + "。"
	}
	c.renderCard(w, r, http.StatusOK, card, card.Summary, nil, p)
}

func (c *console) renderCard(w http.ResponseWriter, r *http.Request, status int, card *model.SummaryCard, text string,
	refused *review.NotGreen, p page) {
	d := cardData{C: card, Badge: gradeBadge(card.Grade), Sigma: fmtSigma(card.Sigma), Total: len(card.Anchors),
		Missing: review.Missing(card, c.cards), Frozen: card.TakedownID != nil, NoGrader: c.cards == nil, Text: text,
		Relevance: card.Relevance}
	if refused != nil {
		d.Refused = &refusedView{Badge: gradeBadge(refused.Grade), Sigma: fmtSigma(refused.Sigma),
			Covered: refused.Covered, Total: refused.Total, Missing: refused.Missing}
	}
	p.Title, p.Active, p.Data = "摘要卡 · "+card.Title, "cards", d
	c.render(w, r, status, "card", p)
}

// cardOfPath loads the card named by the path, answering 404 itself.
func (c *console) cardOfPath(w http.ResponseWriter, r *http.Request) (*model.SummaryCard, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这张摘要卡。")
		return nil, false
	}
	card, err := c.store.CardByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这张摘要卡。")
		return nil, false
	}
	if err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	return card, true
}
