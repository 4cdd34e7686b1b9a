package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The cookie challenge imitates the city portal's anti-bot shield:
// HTTP 412 and a page whose script computes a proof over a server
// nonce, stores it in a cookie and reloads. The proof binds an HMAC the
// server signed (so the expiry can't be forged) and takes work only a script
// run does; a client that never runs the page's JavaScript never gets in.

// ClearanceCookie is the name of the cookie the challenge script sets.
const ClearanceCookie = "zz_clearance"

// ChallengeMarker is in every challenge page (the adapter's body signature).
const ChallengeMarker = "zz-shield"

// challengeRounds is how many hash rounds the page's script runs.
const challengeRounds = 2000

// fnv1a is 32-bit FNV-1a over the bytes of s; the page's script computes the
// same over char codes (all inputs are ASCII).
func fnv1a(s string) string {
	x := uint32(0x811c9dc5)
	for i := 0; i < len(s); i++ {
		x ^= uint32(s[i])
		x *= 0x01000193
	}
	return fmt.Sprintf("%08x", x)
}

// challengeProof is what the script computes from nonce, expiry and the
// server's signature.
func challengeProof(nonce, expiry, sig string) string {
	p := fnv1a(nonce + "." + expiry + "." + sig)
	for i := range challengeRounds {
		p = fnv1a(p + sig + strconv.Itoa(i))
	}
	return p
}

func (w *World) challengeSig(nonce, expiry string) string {
	m := hmac.New(sha256.New, w.secret)
	m.Write([]byte(nonce + "." + expiry))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// cleared reports whether r carries a clearance cookie valid on the sim clock.
func (w *World) cleared(r *http.Request) bool {
	c, err := r.Cookie(ClearanceCookie)
	if err != nil {
		return false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 {
		return false
	}
	nonce, expiry, proof := parts[0], parts[1], parts[2]
	exp, err := strconv.ParseInt(expiry, 10, 64)
	if err != nil || exp <= w.Now().Unix() {
		return false
	}
	want := challengeProof(nonce, expiry, w.challengeSig(nonce, expiry))
	return hmac.Equal([]byte(proof), []byte(want))
}

// newChallenge mints a fresh nonce and the expiry and signature that go
// with it, valid for the challenge TTL from now on the sim clock.
func (w *World) newChallenge() (nonce, expiry, sig string) {
	seq := w.nonceSeq.Add(1)
	m := hmac.New(sha256.New, w.secret)
	fmt.Fprintf(m, "nonce:%d", seq)
	nonce = hex.EncodeToString(m.Sum(nil))[:16]
	expiry = strconv.FormatInt(w.Now().Add(w.opts.ChallengeTTL).Unix(), 10)
	return nonce, expiry, w.challengeSig(nonce, expiry)
}

// Clearance returns the cookie a browser holds after running the challenge
// script now: valid on the sim clock for the challenge TTL. It lets tests
// and benchmarks read the city portal's pages with a plain HTTP client; the
// crawler can never obtain one this way, it has to pass the challenge.
func (w *World) Clearance() *http.Cookie {
	nonce, expiry, sig := w.newChallenge()
	return &http.Cookie{Name: ClearanceCookie, Value: nonce + "." + expiry + "." + challengeProof(nonce, expiry, sig), Path: "/"}
}

// serveChallenge answers 412 with the script page.
func (w *World) serveChallenge(rw http.ResponseWriter, r *http.Request) {
	nonce, expiry, sig := w.newChallenge()
	page := fmt.Sprintf(challengePage, ChallengeMarker, nonce, expiry, sig, challengeRounds, ClearanceCookie)
	rw.Header().Set("Cache-Control", "no-store")
	text(rw, r, http.StatusPreconditionFailed, "text/html; charset=utf-8", page)
}

const challengePage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>安全检测</title></head>
<body><div id="%s">正在进行安全检测，请稍候……</div>
<noscript>请开启浏览器的 JavaScript 后访问本网站。</noscript>
<script>
(function () {
  var n = "%s", e = "%s", k = "%s", rounds = %d;
  function h(s) {
    var x = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      x ^= s.charCodeAt(i);
      x = Math.imul(x, 0x01000193) >>> 0;
    }
    return ("0000000" + x.toString(16)).slice(-8);
  }
  var p = h(n + "." + e + "." + k);
  for (var i = 0; i < rounds; i++) { p = h(p + k + i); }
  document.cookie = "%s=" + n + "." + e + "." + p + "; path=/";
  location.reload();
})();
</script>
</body></html>
`
