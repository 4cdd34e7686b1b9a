package budget_test

import (
	"math"
	"net/http"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/store"
)

// The acquisition API behind keys and budgets: the caller on the context,
// the rate limit on every /v1 route, GET /v1/usage, and each request
// reserved before it is sent and settled after.
func Example() {
	var (
		st    *store.Store  // the open store
		users *auth.Service // auth.New(st, …)
	)
	b := budget.New(st, time.Now)
	v1 := http.NewServeMux()
	v1.Handle("GET /v1/usage", b.UsageHandler())
	v1.HandleFunc("POST /v1/render", func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context()) // checked for ScopeAcquire before this
		timeout := 30 * time.Second
		res, err := b.Reserve(r.Context(), p.APIKeyID, budget.Cost{Requests: 1, Bytes: 10 << 20,
			BrowserSeconds: int64(math.Ceil(timeout.Seconds()))})
		if budget.WriteError(w, err) { // 402 BUDGET_EXCEEDED
			return
		}
		if err != nil {
			http.Error(w, "internal", http.StatusInternalServerError)
			return
		}
		defer res.Cancel(r.Context()) // refused before sending (robots, SSRF, breaker): billed nothing
		// … render; then charge what it cost:
		_ = res.Settle(r.Context(), budget.Cost{Requests: 1, Bytes: 412_000, BrowserSeconds: 4})
	})
	_ = http.Handler(users.Middleware(b.RateLimit(v1)))
}
