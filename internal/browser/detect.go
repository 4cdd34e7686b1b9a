package browser

import (
	"strings"
	"unicode/utf8"
)

// DefaultCaptchaMarkers are words in a page's visible text that mean a
// human check. Configurable per render; the adapter's resilience rules may
// add a site's own.
var DefaultCaptchaMarkers = []string{"验证码", "人机验证", "滑动验证", "拖动滑块", "captcha", "slider"}

// captchaTextLimit is the visible text length under which a page that names
// a CAPTCHA is taken to be one. A real article or list page is longer, and
// may mention 验证码 in a comment form without being a wall; an error
// status (4xx/5xx) counts whatever the length.
const captchaTextLimit = 1500

// findCaptcha returns the marker that makes the page a CAPTCHA wall, or "".
// Markers are matched in the visible text and the title, not in the HTML:
// a script library named "slider" is not a human check.
func findCaptcha(title, text string, status int, markers []string) string {
	if status < 400 && utf8.RuneCountInString(text) > captchaTextLimit {
		return ""
	}
	return findMarker(title+"\n"+text, markers)
}

// findMarker returns the first marker found in s, matching ASCII letters
// without regard to case, or "".
func findMarker(s string, markers []string) string {
	lower := strings.ToLower(s)
	for _, m := range markers {
		m = strings.TrimSpace(m)
		if m != "" && strings.Contains(lower, strings.ToLower(m)) {
			return m
		}
	}
	return ""
}
