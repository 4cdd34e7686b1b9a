// Package api owns zhizhi's JSON API under /api/v1: sites, site and local
// departments, targets (read, and changed through internal/target behind
// its dry-run gate), articles, crawl logs, stale targets, the column
// registry and its bulk subscription, "crawl now", the incremental RAG
// export, summary cards (read, and rewritten behind the grade gate) and
// takedown requests, and the governed corpus: works, their trace, text and
// citations, intake, duplicate candidates, releases (build, verify,
// activate, roll back, export), search over the active release, and the
// Wayback CDX index at /cdx. openapi.yaml, served at /api/v1/openapi.yaml,
// describes every route, and the tests hold each handler to it. Every
// route sits behind a role check (viewer to read, operator to change,
// admin to activate or roll back a release); an API key also needs the
// matching scope.
package api

import (
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1"

// CDXPath is where the Wayback CDX index of the active release's snapshots
// answers; the handler New returns serves it too.
const CDXPath = "/cdx"

// API key scopes: the ones auth defines, whose one rule (auth.Principal.Allows)
// every route is checked with.
const (
	ScopeRead   = auth.ScopeRead   // every GET
	ScopeWrite  = auth.ScopeWrite  // every change
	ScopeExport = auth.ScopeExport // the RAG export
)

// Body limits: JSON requests are small; a department CSV from OA may be
// large but not without bound.
const (
	maxJSONBody = 1 << 20
	maxCSVBody  = 10 << 20
)

//go:embed openapi.yaml
var openapiYAML []byte

// Options are the API's dependencies.
type Options struct {
	Store *store.Store
	Auth  auth.Authenticator
	// CrawlNow queues an urgent crawl of a target (queue.CrawlNow in zhizhi
	// serve).
	CrawlNow func(ctx context.Context, targetID int64) error
	// Targets changes targets and runs their dry-run; its Validate must be
	// set (the crawler's, in zhizhi serve), or no target with a sample
	// article could ever be saved.
	Targets *target.Service
	// Cards grades a person's rewrite of a summary card; nil answers every
	// rewrite with 503.
	Cards CardGrader
	// Corpus answers the corpus's routes (works, intake, candidates,
	// releases, search, /cdx); nil answers each of them with 503.
	Corpus *corpus.Service
	Log    *slog.Logger
	Now    func() time.Time
}

// handler holds what every endpoint needs; each endpoint is a method in
// its own file.
type handler struct {
	st       *store.Store
	authn    auth.Authenticator
	crawlNow func(ctx context.Context, targetID int64) error
	targets  *target.Service
	cards    CardGrader
	corpus   *corpus.Service
	cdx      cdxCache
	log      *slog.Logger
	now      func() time.Time
}

// route is one endpoint: the role it needs, the API key scope it needs,
// and its handler. The table is what New registers and what the tests
// compare with openapi.yaml.
type route struct {
	method string
	path   string // below Prefix, or from the root when root is set
	role   auth.Role
	scope  string
	serve  http.HandlerFunc
	root   bool
}

// pattern is the route's path as the mux sees it.
func (rt route) pattern() string {
	if rt.root {
		return rt.path
	}
	return Prefix + rt.path
}

func (h *handler) routes() []route {
	read := func(path string, fn http.HandlerFunc) route {
		return route{method: http.MethodGet, path: path, role: auth.RoleViewer, scope: ScopeRead, serve: fn}
	}
	write := func(path string, fn http.HandlerFunc) route {
		return route{method: http.MethodPost, path: path, role: auth.RoleOperator, scope: ScopeWrite, serve: fn}
	}
	// Activating a release changes what every reader, search and agent
	// answers from: the admin role's, as on the console and the command
	// line. Keys have no admin scope; write is the highest scope that
	// changes anything, so an admin's key with write may activate and an
	// operator's may not.
	admin := func(path string, fn http.HandlerFunc) route {
		return route{method: http.MethodPost, path: path, role: auth.RoleAdmin, scope: ScopeWrite, serve: fn}
	}
	return []route{
		read("/openapi.yaml", h.openapiGet),
		read("/sites", h.siteList),
		read("/sites/{id}", h.siteGet),
		read("/sites/{id}/departments", h.siteDepartmentList),
		read("/departments", h.departmentList),
		write("/departments/import", h.departmentImport),
		read("/departments/{id}", h.departmentGet),
		read("/targets", h.targetList),
		write("/targets", h.targetCreate),
		// A dry-run only reads, but it sends requests to a government site:
		// it is the operator's to ask for.
		write("/targets/dry-run", h.targetCreatePreview),
		read("/targets/stale", h.targetStaleList),
		read("/targets/{id}", h.targetGet),
		{method: http.MethodPatch, path: "/targets/{id}", role: auth.RoleOperator, scope: ScopeWrite, serve: h.targetUpdate},
		write("/targets/{id}/dry-run", h.targetDryRun),
		write("/targets/{id}/enable", h.targetEnable),
		write("/targets/{id}/disable", h.targetDisable),
		write("/targets/{id}/revert", h.targetRevert),
		read("/targets/{id}/provenance", h.targetProvenanceGet),
		write("/targets/{id}/crawl", h.targetCrawl),
		read("/articles", h.articleList),
		read("/articles/unexported", h.articleUnexportedList),
		read("/articles/{id}", h.articleGet),
		read("/crawl-logs", h.crawlLogList),
		read("/columns", h.columnList),
		write("/columns/subscribe", h.columnSubscribe),
		write("/columns/unsubscribe", h.columnUnsubscribe),
		write("/columns/{id}/preview", h.columnPreview),
		// The export marks what it hands out, so it is a change: operator
		// role, and an API key needs the export scope.
		{method: http.MethodPost, path: "/export", role: auth.RoleOperator, scope: ScopeExport, serve: h.exportCreate},
		read("/cards", h.cardList),
		read("/cards/{id}", h.cardGet),
		write("/cards/{id}/rewrite", h.cardRewrite),
		read("/takedowns", h.takedownList),
		write("/takedowns", h.takedownCreate),
		read("/takedowns/{id}", h.takedownGet),
		write("/takedowns/{id}/freeze", h.takedownFreeze),
		read("/works", h.workList),
		read("/works/{id}", h.workGet),
		read("/works/{id}/trace", h.workTraceGet),
		read("/works/{id}/text", h.workTextGet),
		read("/works/{id}/citation", h.workCitationGet),
		write("/works/{id}/status", h.workStatusSet),
		write("/corpus/intake", h.corpusIntake),
		read("/corpus/rules", h.corpusRuleList),
		write("/corpus/rules", h.corpusRuleCreate),
		read("/corpus/candidates", h.corpusCandidateList),
		write("/corpus/candidates/{id}/decision", h.corpusCandidateDecide),
		read("/releases", h.releaseList),
		write("/releases", h.releaseBuild),
		read("/releases/active", h.releaseActiveGet),
		write("/releases/{version}/verify", h.releaseVerify),
		admin("/releases/{version}/activate", h.releaseActivate),
		admin("/releases/rollback", h.releaseRollback),
		// A release's export hands out the corpus's whole text in bulk, the
		// feed a knowledge base takes: like POST /export, the operator's,
		// and an API key needs the export scope.
		{method: http.MethodGet, path: "/releases/{version}/export", role: auth.RoleOperator, scope: ScopeExport, serve: h.releaseExport},
		read("/search", h.corpusSearch),
		// The Wayback CDX server's path is /cdx, outside /api/v1, so CDX
		// clients find it where they look; it reads like any GET.
		{method: http.MethodGet, path: CDXPath, role: auth.RoleViewer, scope: ScopeRead, serve: h.cdxGet, root: true},
	}
}

// New returns the handler of every path under /api/v1/ and of GET /cdx;
// mount it with mux.Handle(api.Prefix+"/", h) and mux.Handle(api.CDXPath, h).
// It panics when a required dependency is missing: that is a wiring
// mistake, found at start-up.
func New(opts Options) http.Handler {
	if opts.Store == nil || opts.Auth == nil || opts.CrawlNow == nil || opts.Targets == nil || opts.Targets.Validate == nil {
		panic("api.New: Store, Auth, CrawlNow and Targets (with its Validate) are required")
	}
	h := &handler{st: opts.Store, authn: opts.Auth, crawlNow: opts.CrawlNow, targets: opts.Targets, cards: opts.Cards,
		corpus: opts.Corpus, log: opts.Log, now: opts.Now}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		h.now = time.Now
	}
	mux := http.NewServeMux()
	for _, rt := range h.routes() {
		mux.Handle(rt.method+" "+rt.pattern(), h.guard(rt))
	}
	// Anything else under the prefix (or another method on /cdx) gets a
	// JSON 404 or 405, never the mux's plain-text page.
	fallback := func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			h.fail(w, r, errorf(http.StatusMethodNotAllowed, "method_not_allowed",
				"%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		h.fail(w, r, errorf(http.StatusNotFound, "not_found", "no API endpoint at %s; the list is at %s/openapi.yaml", r.URL.Path, Prefix))
	}
	mux.HandleFunc(Prefix+"/", fallback)
	mux.HandleFunc(CDXPath, fallback)
	return mux
}

// allowedMethods lists the methods some route accepts on r's path.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := mux.Handler(r2); pattern != "" && pattern != Prefix+"/" && pattern != CDXPath {
			out = append(out, m)
		}
	}
	return out
}

// guard admits a request only for a caller with the route's role (and, for
// an API key, its scope), and puts the caller on the request's context.
func (h *handler) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := h.authn.Authenticate(r)
		if err != nil && !isUnauthenticated(err) {
			h.fail(w, r, err)
			return
		}
		if p == nil {
			h.fail(w, r, errorf(http.StatusUnauthorized, "unauthenticated",
				"sign in, or send an API key as \"Authorization: Bearer <key>\""))
			return
		}
		if !p.Role.AtLeast(rt.role) {
			h.fail(w, r, errorf(http.StatusForbidden, "forbidden",
				"this needs the %s role; you have %q", rt.role, p.Role))
			return
		}
		if !p.Allows(rt.scope) {
			h.fail(w, r, errorf(http.StatusForbidden, "forbidden",
				"this API key lacks the %q scope; create a key with --scope %s", rt.scope, rt.scope))
			return
		}
		rt.serve(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

// principal is the caller guard admitted.
func principal(r *http.Request) *auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}
