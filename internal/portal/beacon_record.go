package portal

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"zhizhi/internal/ledger"
	"zhizhi/internal/store"
)

// maxBeacon bounds a beacon's body: five small counts and a token.
const maxBeacon = 1024

// beaconRecord takes the page script's batch of interaction event counts
// (scroll, pointer, key, click, visibility) and the token its page was
// served with. Only those are read; the script sends nothing else. A post
// from another site is refused; one without its page's token is answered
// alike but its counts are not taken (the recorder checks the token).
func (p *portal) beaconRecord(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		w.WriteHeader(http.StatusForbidden)
		return
	}
	var b struct {
		Scroll     int64  `json:"scroll"`
		Pointer    int64  `json:"pointer"`
		Key        int64  `json:"key"`
		Click      int64  `json:"click"`
		Visibility int64  `json:"visibility"`
		Token      string `json:"token"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBeacon+1))
	if err != nil || len(body) > maxBeacon || json.Unmarshal(body, &b) != nil {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	p.record(r, ledger.Hit{Kind: ledger.KindBeacon, Events: store.VisitorEvents{Scroll: b.Scroll,
		Pointer: b.Pointer, Key: b.Key, Click: b.Click, Visibility: b.Visibility}, Token: b.Token})
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// sameOrigin refuses what a browser marks as coming from another site.
// Clients that send neither header (not browsers) pass: their counts only
// move their own score.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}
