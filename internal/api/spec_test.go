package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"zhizhi/internal/acquire"
	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// TestOpenAPIDocumentIsValid: the description clients generate code from
// is itself a valid OpenAPI document.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := loadSpec(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI: %v", err)
	}
}

// TestRoutesMatchOpenAPI: every route the API serves is described in
// openapi.yaml, every described operation is served, and every route of
// the table really reaches the mux under its own pattern.
func TestRoutesMatchOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	h := &handler{}
	served := map[string]bool{}
	for _, rt := range h.routes() {
		served[rt.method+" "+rt.pattern()] = true
	}
	// The acquisition API (/v1, Firecrawl's /v2) is described here too.
	for _, p := range append(acquire.Patterns, acquire.UsagePattern) {
		served[p] = true
	}
	described := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described[method+" "+path] = true
		}
	}
	var missing, extra []string
	for k := range served {
		if !described[k] {
			missing = append(missing, k)
		}
	}
	for k := range described {
		if !served[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("served but not in openapi.yaml: %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("in openapi.yaml but not served: %s", strings.Join(extra, ", "))
	}

	st := storetest.SQLite(t)
	api := New(Options{Store: st, Auth: testPrincipals, CrawlNow: func(context.Context, int64) error { return nil },
		Targets: &target.Service{Store: st, Validate: noWeb}})
	mux, ok := api.(*http.ServeMux)
	if !ok {
		t.Fatalf("New returns %T, want *http.ServeMux", api)
	}
	acq, err := acquire.New(acquire.Deps{Store: st, Client: noFetch(t, st)})
	if err != nil {
		t.Fatal(err)
	}
	acqMux := acq.Mux(budget.New(st, nil))
	for k := range described {
		method, path, _ := strings.Cut(k, " ")
		req := httptest.NewRequest(method, "http://zhizhi.test"+examplePath(path), nil)
		m := mux
		if !strings.HasPrefix(path, Prefix+"/") && path != CDXPath {
			m = acqMux
		}
		if _, pattern := m.Handler(req); pattern != k {
			t.Errorf("%s reaches pattern %q, want %q", k, pattern, k)
		}
	}
}

// TestEveryRouteIsGuarded: no route answers a caller without credentials.
func TestEveryRouteIsGuarded(t *testing.T) {
	a := newAPITest(t, storetest.SQLite(t), fixedNow)
	for _, rt := range (&handler{}).routes() {
		path := examplePath(rt.pattern())
		res := a.do(request{method: rt.method, target: path})
		if res.status != http.StatusUnauthorized {
			t.Errorf("%s %s without credentials: %d, want 401", rt.method, path, res.status)
		}
		if e := res.errorBody(t); e.Error != "unauthenticated" {
			t.Errorf("%s %s without credentials: error %q, want unauthenticated", rt.method, path, e.Error)
		}
	}
}

// examplePath fills a route pattern's wildcards with values of their form.
func examplePath(pattern string) string {
	return strings.NewReplacer("{id}", "1", "{version}", "20260423-1").Replace(pattern)
}

// noFetch is a polite client that can reach nothing, for tests that only
// look at routes.
func noFetch(t *testing.T, st *store.Store) *fetch.Client {
	t.Helper()
	c, err := fetch.NewClient(fetch.ClientOptions{Store: st,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return nil, fmt.Errorf("no network in this test: %s", addr)
		},
		LookupIP: func(ctx context.Context, host string) ([]net.IP, error) {
			return nil, fmt.Errorf("no DNS in this test: %s", host)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
