package budget_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
)

// serve is one process's /v1 as the acquisition API mounts it: the
// caller on the context, the rate limit, then the handlers. POST /v1/fetch
// stands for a request that reserves 1 request and 1000 bytes, and settles
// at 600 bytes, or is refused before sending (?refuse=robots) and cancels.
func serve(t *testing.T, p *process) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/usage", p.svc.UsageHandler())
	mux.HandleFunc("POST /v1/fetch", func(w http.ResponseWriter, r *http.Request) {
		pr, _ := auth.FromContext(r.Context())
		res, err := p.svc.Reserve(r.Context(), pr.APIKeyID, budget.Cost{Requests: 1, Bytes: 1000})
		if budget.WriteError(w, err) {
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer res.Cancel(r.Context())
		if r.URL.Query().Get("refuse") != "" {
			http.Error(w, `{"success":false,"code":"ROBOTS_BLOCKED"}`, http.StatusForbidden)
			return
		}
		if err := res.Settle(r.Context(), budget.Cost{Requests: 1, Bytes: 600}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		io.WriteString(w, `{"success":true,"data":{}}`)
	})
	srv := httptest.NewServer(p.auth.Middleware(p.svc.RateLimit(mux)))
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func call(t *testing.T, srv *httptest.Server, method, path, key string) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a.body); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, b)
	}
	return a
}

// rateHeaders checks the X-RateLimit-* headers.
func rateHeaders(t *testing.T, a answer, limit, remaining int, reset time.Time) {
	t.Helper()
	h := a.header
	if h.Get("X-RateLimit-Limit") != strconv.Itoa(limit) || h.Get("X-RateLimit-Remaining") != strconv.Itoa(remaining) ||
		h.Get("X-RateLimit-Reset") != strconv.FormatInt(reset.Unix(), 10) {
		t.Errorf("status %d: X-RateLimit-Limit %q Remaining %q Reset %q, want %d %d %d", a.status,
			h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), limit, remaining, reset.Unix())
	}
}

func dataInt(t *testing.T, a answer, budgetName, field string) int64 {
	t.Helper()
	data, _ := a.body["data"].(map[string]any)
	m, _ := data[budgetName].(map[string]any)
	v, ok := m[field].(float64)
	if !ok {
		t.Fatalf("usage %v has no data.%s.%s", a.body, budgetName, field)
	}
	return int64(v)
}

// TestRateLimitAndBudgetHTTP: every answer carries the X-RateLimit-*
// headers; the request past a key's per-minute limit is 429 with
// Retry-After until the minute ends; the request past its daily budget is
// 402 BUDGET_EXCEEDED naming the budget; a request refused before sending
// costs nothing; and each key's /v1/usage shows its own spending only.
func TestRateLimitAndBudgetHTTP(t *testing.T) {
	forEachDialect(t, 1, func(t *testing.T, w *world) {
		srv := serve(t, w.procs[0])
		keyA, _ := w.key(t, "alice", auth.RoleOperator, &budget.Limits{PerDay: budget.Defaults.PerDay, RequestsPerMinute: 3}, auth.ScopeAcquire)
		small := budget.Defaults
		small.PerDay.Requests = 2
		keyB, _ := w.key(t, "bob", auth.RoleOperator, &small, auth.ScopeRead, auth.ScopeAcquire)
		readOnly, _ := w.key(t, "bob", auth.RoleOperator, nil, auth.ScopeRead)
		reset := time.Date(2026, 12, 2, 15, 31, 0, 0, time.UTC) // t0 is 15:30:20

		for i := range 3 {
			a := call(t, srv, "POST", "/v1/fetch", keyA)
			if a.status != http.StatusOK {
				t.Fatalf("request %d of 3 a minute: %d %v", i+1, a.status, a.body)
			}
			rateHeaders(t, a, 3, 2-i, reset)
		}
		a := call(t, srv, "POST", "/v1/fetch", keyA)
		if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "40" ||
			a.body["success"] != false || a.body["code"] != "RATE_LIMITED" {
			t.Errorf("4th request in the minute: %d Retry-After %q %v, want 429 RATE_LIMITED after 40 s",
				a.status, a.header.Get("Retry-After"), a.body)
		}
		rateHeaders(t, a, 3, 0, reset)
		w.clk.Set(reset.Add(-time.Second))
		if a := call(t, srv, "POST", "/v1/fetch", keyA); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "1" {
			t.Errorf("a second before the minute ends: %d Retry-After %q", a.status, a.header.Get("Retry-After"))
		}
		w.clk.Set(reset)
		a = call(t, srv, "POST", "/v1/fetch?refuse=robots", keyA)
		if a.status != http.StatusForbidden {
			t.Fatalf("refused request: %d %v", a.status, a.body)
		}
		rateHeaders(t, a, 3, 2, reset.Add(time.Minute))

		// Key B: 2 requests a day, then 402 with the budget named, and the
		// rate headers still there.
		for range 2 {
			if a := call(t, srv, "POST", "/v1/fetch", keyB); a.status != http.StatusOK {
				t.Fatalf("key B: %d %v", a.status, a.body)
			}
		}
		a = call(t, srv, "POST", "/v1/fetch", keyB)
		msg, _ := a.body["error"].(string)
		if a.status != http.StatusPaymentRequired || a.body["success"] != false || a.body["code"] != "BUDGET_EXCEEDED" ||
			!strings.Contains(msg, "daily budget of requests exceeded: 2 of 2 used") {
			t.Errorf("over budget: %d %v, want 402 BUDGET_EXCEEDED naming the requests budget", a.status, a.body)
		}
		rateHeaders(t, a, 60, 57, reset.Add(time.Minute))

		// Usage: A made 3 requests that were sent (600 bytes each) and one
		// refused before sending; B made 2. Each key sees its own, whatever
		// it asks for.
		w.clk.Set(reset.Add(time.Minute))
		ua := call(t, srv, "GET", "/v1/usage", keyA)
		if ua.status != http.StatusOK || ua.body["success"] != true {
			t.Fatalf("usage A: %d %v", ua.status, ua.body)
		}
		if dataInt(t, ua, "requests", "used") != 3 || dataInt(t, ua, "bytes", "used") != 1800 ||
			dataInt(t, ua, "requests", "reserved") != 0 || dataInt(t, ua, "requests", "limit") != 1000 {
			t.Errorf("usage A: %v, want 3 requests and 1800 bytes of 1000 requests", ua.body)
		}
		ub := call(t, srv, "GET", "/v1/usage?key_id=1&api_key=1", keyB)
		if ub.status != http.StatusOK || dataInt(t, ub, "requests", "used") != 2 || dataInt(t, ub, "bytes", "used") != 1200 ||
			dataInt(t, ub, "requests", "remaining") != 0 {
			t.Errorf("usage B: %d %v, want its own 2 requests and 1200 bytes", ub.status, ub.body)
		}
		if a := call(t, srv, "GET", "/v1/usage", readOnly); a.status != http.StatusForbidden || a.body["success"] != false {
			t.Errorf("usage with a read key: %d %v, want 403", a.status, a.body)
		}
		if a := call(t, srv, "GET", "/v1/usage", ""); a.status != http.StatusUnauthorized || a.body["code"] != "UNAUTHORIZED" {
			t.Errorf("usage with no key: %d %v, want 401", a.status, a.body)
		}
	})
}

// TestRateLimitRace: 50 requests of one key at once, spread over two serve
// processes, against a limit of 10 a minute: exactly 10 reach the handler.
func TestRateLimitRace(t *testing.T) {
	forEachDialect(t, 2, func(t *testing.T, w *world) {
		key, _ := w.key(t, "alice", auth.RoleOperator, &budget.Limits{PerDay: budget.Defaults.PerDay, RequestsPerMinute: 10}, auth.ScopeAcquire)
		srvs := []*httptest.Server{serve(t, w.procs[0]), serve(t, w.procs[1])}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			count = map[int]int{}
		)
		start := make(chan struct{})
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req, _ := http.NewRequestWithContext(context.Background(), "POST", srvs[i%2].URL+"/v1/fetch", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					count[-1]++
					return
				}
				resp.Body.Close()
				count[resp.StatusCode]++
			}()
		}
		close(start)
		wg.Wait()
		if count[http.StatusOK] != 10 || count[http.StatusTooManyRequests] != 40 {
			t.Fatalf("answers %v, want exactly 10 200s and 40 429s", fmt.Sprint(count))
		}
	})
}
