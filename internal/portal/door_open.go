package portal

import (
	"net/http"
	"net/url"

	"zhizhi/internal/ledger"
)

// doorOpen is /go/{card}, the only way from the portal to a full text: it
// counts the click-through and sends the reader to the source page. It
// never fetches the source itself. A HEAD (a link checker, a prefetch) is
// answered the same but not counted as a click.
func (p *portal) doorOpen(w http.ResponseWriter, r *http.Request) {
	c := p.publicCard(w, r)
	if c == nil {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		return
	}
	u, err := url.Parse(c.SourceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// A stored address that is not a web page is never a redirect
		// target (javascript:, data:, a relative path).
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		p.log.Warn("portal door: card source is not a web address", "card", c.ID)
		p.notFound(w, r, goneHeading, goneMsg)
		return
	}
	if r.Method == http.MethodGet {
		p.record(r, ledger.Hit{Kind: ledger.KindDoor, CardID: c.ID})
	} else {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
	}
	// No body: the answer is only the way on.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", u.String())
	w.WriteHeader(http.StatusFound)
}
