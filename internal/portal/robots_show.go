package portal

import (
	"net/http"

	"zhizhi/internal/ledger"
)

// robotsTxt lets search engines index the card pages and keeps them off
// the door (a crawler following it would count as click-throughs and load
// the source sites), the beacon and the APIs and console served beside the
// portal.
const robotsTxt = `# zhizhi public portal
User-agent: *
Allow: /
Allow: /card/
Disallow: /go/
Disallow: /beacon
Disallow: /api/
Disallow: /admin/
Disallow: /v1/
`

func (p *portal) robotsShow(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindOther})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write([]byte(robotsTxt))
}
