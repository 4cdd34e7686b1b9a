package acquire

import (
	"net/http"
	"slices"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
)

// Codes of the answers the guard in front of the API gives.
const (
	CodeUnauthorized      = "UNAUTHORIZED"
	CodeInsufficientScope = "INSUFFICIENT_SCOPE"
)

// Served is the acquisition API as serve mounts it on /v1/ and /v2/: the
// caller signed in by users (an API key as "Authorization: Bearer zk_…",
// or a console session), refused unless it may use the acquire scope (401
// UNAUTHORIZED without a valid key or session, 403 INSUFFICIENT_SCOPE for
// a key without the scope or a session below operator), then b's per-key
// rate limit, then the API's routes and GET /v1/usage. An API key's
// requests are metered against its budgets; an operator's console session
// (the console's own pages calling the API) is allowed and not metered:
// it is a person at the console, as "crawl now" is. The API's Deps.Budget
// should be b.
func (a *API) Served(users *auth.Service, b *budget.Service) http.Handler {
	return users.Middleware(requireAcquire(b.RateLimit(a.Mux(b))))
}

// UsagePattern is the route of b.UsageHandler in Mux.
const UsagePattern = "GET /v1/usage"

// Mux is the API's routes (Patterns) and GET /v1/usage (UsagePattern) on
// a mux of their own, with no guard in front: Served puts it there.
func (a *API) Mux(b *budget.Service) *http.ServeMux {
	mux := http.NewServeMux()
	a.Routes(mux)
	mux.Handle(UsagePattern, b.UsageHandler())
	return mux
}

// requireAcquire refuses a request whose caller may not use the acquire
// scope, before it is counted or metered.
func requireAcquire(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer realm="zhizhi"`)
			writeJSON(w, http.StatusUnauthorized, errorBody{Code: CodeUnauthorized,
				Error: `no valid API key: send one as "Authorization: Bearer zk_…" (zhizhi apikey create --scope acquire); an unknown, expired or revoked key is refused too`})
			return
		case !p.Allows(auth.ScopeAcquire) && p.APIKeyID != 0 && slices.Contains(p.Scopes, auth.ScopeAcquire):
			writeJSON(w, http.StatusForbidden, errorBody{Code: CodeInsufficientScope,
				Error: "this API key's user " + p.Username + " is a " + string(p.Role) + " now, and the acquire scope needs an operator or admin"})
			return
		case !p.Allows(auth.ScopeAcquire) && p.APIKeyID != 0:
			writeJSON(w, http.StatusForbidden, errorBody{Code: CodeInsufficientScope,
				Error: `this API key lacks the "acquire" scope: make one with zhizhi apikey create --user NAME --name LABEL --scope acquire (its user must be an operator or admin)`})
			return
		case !p.Allows(auth.ScopeAcquire):
			writeJSON(w, http.StatusForbidden, errorBody{Code: CodeInsufficientScope,
				Error: "the acquisition API is for operators and admins; your account is a " + string(p.Role)})
			return
		}
		next.ServeHTTP(w, r)
	})
}
