package portal

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

const goneHeading = "信息不存在"
const goneMsg = "该信息不存在或已下线。您可以返回首页浏览其他信息。"

// publicCard returns the card named in the path when the portal shows it;
// nil (after answering 404) when it is missing, frozen or a duplicate.
func (p *portal) publicCard(w http.ResponseWriter, r *http.Request) *model.SummaryCard {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		p.notFound(w, r, goneHeading, goneMsg)
		return nil
	}
	c, err := p.store.CardByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !c.Visible()) {
		p.notFound(w, r, goneHeading, goneMsg)
		return nil
	}
	if err != nil {
		p.serverError(w, r, err)
		return nil
	}
	return c
}

type cardData struct {
	Card       *model.SummaryCard
	SourceHost string
}

// cardShow is one card: its title, its summary when it is good enough to
// show, its source and the door to the full text.
func (p *portal) cardShow(w http.ResponseWriter, r *http.Request) {
	c := p.publicCard(w, r)
	if c == nil {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		return
	}
	p.record(r, ledger.Hit{Kind: ledger.KindPage, CardID: c.ID})
	d := cardData{Card: c}
	if u, err := url.Parse(c.SourceURL); err == nil {
		d.SourceHost = u.Hostname()
	}
	p.render(w, r, http.StatusOK, "card", view{Title: c.Title, Data: d})
}
