// Package browser owns zhizhi's headless Chromium tier: one shared Chromium
// process (Debian's chromium driven through chromedp) that renders a page the
// way a normal visitor's browser would, waits for a site's cookie challenge
// (HTTP 412 and a script that sets a cookie and reloads) to
// clear, and hands back the final HTML, the harvested cookies and a faithful
// record of every network request the tab made.
//
// The tier is held to the same rules as the direct fetcher:
// it identifies itself by appending zhizhi's token to Chromium's own
// User-Agent; Chromium resolves no name itself and reaches the network only
// through a local proxy that dials through the fetcher's SSRF guard (or, in
// this package's own tests, only the hosts of the resolve map); every request a page makes is paused and put to an
// injectable Allow callback (the fetcher's SSRF guard and robots check) before
// Chromium may open a connection; and a CAPTCHA is a stop, never a bypass.
package browser
