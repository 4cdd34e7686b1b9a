package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"zhizhi/internal/adapter"
	"zhizhi/internal/auth"
	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/review/reviewtest"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// tokenAuth stands in for the real authenticator: a bearer token names a
// principal. The real one (sessions, hashed API keys) has its own tests;
// these tests are about what the API does with the principal it gets.
type tokenAuth map[string]*auth.Principal

func (a tokenAuth) Authenticate(r *http.Request) (*auth.Principal, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, auth.ErrUnauthenticated
	}
	p, ok := a[tok]
	if !ok {
		return nil, auth.ErrUnauthenticated
	}
	return p, nil
}

// The callers of the tests.
const (
	tokViewer    = "viewer"
	tokOperator  = "operator"
	tokAdmin     = "admin"
	tokNoRole    = "norole"     // a user whose role is not one of the three
	tokKeyRead   = "key-read"   // an operator's API key with the read scope only
	tokKeyWrite  = "key-write"  // … with the write scope only
	tokKeyExport = "key-export" // … with the export scope only
	tokKeyAll    = "key-all"    // … with every scope
	tokUnknown   = "no-such-token"
)

var testPrincipals = tokenAuth{
	tokViewer:    {UserID: 1, Username: "wang", Role: auth.RoleViewer},
	tokOperator:  {UserID: 2, Username: "li", Role: auth.RoleOperator},
	tokAdmin:     {UserID: 3, Username: "zhao", Role: auth.RoleAdmin},
	tokNoRole:    {UserID: 4, Username: "chen", Role: auth.Role("guest")},
	tokKeyRead:   {UserID: 2, Username: "li", Role: auth.RoleOperator, APIKeyID: 7, Scopes: []string{ScopeRead}},
	tokKeyWrite:  {UserID: 2, Username: "li", Role: auth.RoleOperator, APIKeyID: 8, Scopes: []string{ScopeWrite}},
	tokKeyExport: {UserID: 2, Username: "li", Role: auth.RoleOperator, APIKeyID: 9, Scopes: []string{ScopeExport}},
	tokKeyAll:    {UserID: 2, Username: "li", Role: auth.RoleOperator, APIKeyID: 10, Scopes: []string{ScopeRead, ScopeWrite, ScopeExport}},
}

// loadSpec parses the embedded openapi.yaml.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapiYAML)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	return doc
}

// apiTest drives the API over a real store and checks every exchange
// against openapi.yaml.
type apiTest struct {
	t      *testing.T
	st     *store.Store
	h      http.Handler
	router routers.Router
	now    time.Time

	mu        sync.Mutex
	crawled   []int64
	crawlFail error
	logs      bytes.Buffer
}

func newAPITest(t *testing.T, st *store.Store, now time.Time) *apiTest {
	t.Helper()
	return newAPITestWith(t, st, now, noWeb, noColumn)
}

// noWeb is the dry-run of a test without the simulated web: it cannot read
// anything, as a dry-run against an unreachable site cannot.
func noWeb(context.Context, *model.Site, *model.Target, string, string) (*crawl.Validation, error) {
	return nil, errors.New("this test has no web to read")
}

// noColumn is noWeb's column preview.
func noColumn(context.Context, *model.Site, *model.Target) ([]adapter.ListItem, error) {
	return nil, errors.New("this test has no web to read")
}

// newAPITestWith is newAPITest with the dry-run validate and the column
// lister (the crawler's, against the simulated web, for the tests of the
// dry-run gate and of column previews).
func newAPITestWith(t *testing.T, st *store.Store, now time.Time, validate target.Validator, list target.ColumnLister, more ...func(*Options)) *apiTest {
	t.Helper()
	a := &apiTest{t: t, st: st, now: now}
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router from openapi.yaml: %v", err)
	}
	a.router = router
	opts := Options{Store: st, Auth: testPrincipals, Log: slog.New(slog.NewTextHandler(&a.logs, nil)),
		Targets: &target.Service{Store: st, Validate: validate, List: list}, Cards: reviewtest.Grader,
		Now: func() time.Time { return a.now },
		CrawlNow: func(ctx context.Context, id int64) error {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.crawlFail != nil {
				return a.crawlFail
			}
			a.crawled = append(a.crawled, id)
			return nil
		}}
	for _, f := range more {
		f(&opts)
	}
	a.h = New(opts)
	return a
}

// reply is a response the harness has already checked against the spec.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r reply) errorBody(t *testing.T) errorBody {
	t.Helper()
	var e errorBody
	r.decode(t, &e)
	return e
}

// request is one call of the API.
type request struct {
	method, target, token string
	body                  []byte
	contentType           string
}

func get(target, token string) request {
	return request{method: http.MethodGet, target: target, token: token}
}

func postJSON(target, token, body string) request {
	r := request{method: http.MethodPost, target: target, token: token, contentType: "application/json"}
	if body != "" {
		r.body = []byte(body)
	}
	return r
}

func patchJSON(target, token, body string) request {
	r := request{method: http.MethodPatch, target: target, token: token, contentType: "application/json"}
	if body != "" {
		r.body = []byte(body)
	}
	return r
}

func (a *apiTest) newHTTPRequest(rq request) *http.Request {
	var body io.Reader = http.NoBody
	if rq.body != nil {
		body = bytes.NewReader(rq.body)
	}
	req := httptest.NewRequest(rq.method, "http://zhizhi.test"+rq.target, body)
	if rq.token != "" {
		req.Header.Set("Authorization", "Bearer "+rq.token)
	}
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	return req
}

// do serves rq and holds the exchange to openapi.yaml: every response must
// be one the spec documents for the operation (status, content type,
// body), and a request the server accepted (2xx) must be one the spec
// allows. Requests to paths the spec does not have may only fail, with a
// JSON error.
func (a *apiTest) do(rq request) reply {
	a.t.Helper()
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, a.newHTTPRequest(rq))
	res := reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}

	ctx := context.Background()
	req := a.newHTTPRequest(rq)
	route, pathParams, err := a.router.FindRoute(req)
	if err != nil {
		if res.status < 400 {
			a.t.Fatalf("%s %s: answered %d but openapi.yaml has no such operation (%v)", rq.method, rq.target, res.status, err)
		}
		var e errorBody
		if jerr := json.Unmarshal(res.body, &e); jerr != nil || e.Error == "" || e.Detail == "" {
			a.t.Fatalf("%s %s: error answer is not {error, detail}: %s", rq.method, rq.target, res.body)
		}
		return res
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: specAuth, MultiError: true}}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if res.status >= 200 && res.status < 300 && reqErr != nil {
		a.t.Fatalf("%s %s: answered %d to a request openapi.yaml does not allow: %v", rq.method, rq.target, res.status, reqErr)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.status, Header: res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(res.body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		a.t.Fatalf("%s %s: response %d does not match openapi.yaml: %v\nbody: %.2000s", rq.method, rq.target, res.status, err, res.body)
	}
	return res
}

// specAuth checks the security requirement the way openapi.yaml states it:
// a bearer token or the session cookie must be present.
func specAuth(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	r := in.RequestValidationInput.Request
	switch in.SecuritySchemeName {
	case "bearerAuth":
		if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			return nil
		}
	case "sessionCookie":
		if _, err := r.Cookie("zhizhi_session"); err == nil {
			return nil
		}
	}
	return errors.New("no credentials")
}

// expect fails unless the reply has status.
func (a *apiTest) expect(rq request, status int) reply {
	a.t.Helper()
	res := a.do(rq)
	if res.status != status {
		a.t.Fatalf("%s %s as %q: status %d, want %d; body %.1000s", rq.method, rq.target, rq.token, res.status, status, res.body)
	}
	return res
}

func (a *apiTest) crawledIDs() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]int64(nil), a.crawled...)
}

func idPath(format string, id int64) string { return fmt.Sprintf(format, id) }
