package browser

import "errors"

// Errors a caller tells apart with errors.Is. Render returns them together
// with the partial Page, so the requests made before the stop are still logged.
var (
	// ErrCaptcha means the page asks for a human (验证码, slider, ...). The
	// crawler stops there: solving or bypassing it is never attempted.
	ErrCaptcha = errors.New("captcha page: a human check is a stop, not bypassed")

	// ErrChallengeNotCleared means the cookie challenge was still in place
	// when RenderOptions.MaxWait ran out.
	ErrChallengeNotCleared = errors.New("cookie challenge not cleared in time")

	// ErrBlocked means the Allow callback (or the resource policy) refused
	// the page's main document, so nothing was loaded.
	ErrBlocked = errors.New("request refused")

	// ErrClosed means Render was called after Close or after the context
	// given to New ended.
	ErrClosed = errors.New("browser closed")
)
