// Package ui owns the admin console: the server-rendered pages, in
// Simplified Chinese, that government staff use instead of the command
// line — overview, sites, hosts, adapters, crawl logs, jobs and the audit
// trail. Pages are html/template files embedded in the binary and parsed
// when the console is built, so a broken template stops the start, not a
// request. The only script is a vendored htmx; every page works without it.
package ui

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf8"
	"zhizhi/internal/config/zone"
	"zhizhi/internal/pages"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// Prefix is where the console lives; the handler New returns serves only
// paths under it and is mounted there as it is (no prefix stripping).
const Prefix = "/admin"

// Jobs is what the console reads from and asks of the job queue.
// *queue.Queue implements it.
type Jobs interface {
	Jobs(ctx context.Context, states ...rivertype.JobState) ([]queue.JobInfo, error)
	Depth(ctx context.Context) (map[rivertype.JobState]int, error)
	CrawlNow(ctx context.Context, t model.Target) (queue.Enqueued, error)
	// StartOnboard queues the work of an onboarding wizard run.
	StartOnboard(ctx context.Context, runID string) error
}

// Options are the console's dependencies.
type Options struct {
	Store    *store.Store
	Sessions auth.Sessions
	Jobs     Jobs
	// ConfigDir is the configuration directory (sites/, cms/), read to show
	// the YAML templates; the console never writes there.
	ConfigDir string
	// Onboard gives the batch onboarding wizard for one run: the polite
	// fetcher and the live configuration. Nil leaves the wizard off.
	Onboard func(ctx context.Context) (*onboard.Wizard, error)
	Log     *slog.Logger
	Now     func() time.Time
	// Targets changes targets (create, edit, the dry-run gate, catalog
	// subscriptions). Nil: one on Store without a dry-run, which refuses to
	// save any target that has a sample article.
	Targets *target.Service
	// Cards grades a person's rewrite of a summary card. Nil: the review
	// pages show cards but the rewrite form is disabled.
	Cards CardGrader
	// Location is the zone the pages show times in (ZHIZHI_TIMEZONE when
	// nil).
	Location *time.Location
	// Acquire is the acquisition API as serve mounts it on /v1/, which
	// the Studio (工作台) calls in-process as the signed-in operator. Nil:
	// the Studio says the API is not served here.
	Acquire http.Handler
	// Corpus is the governed corpus (intake, works, candidates, releases,
	// search over the active release). Nil: the corpus pages say the
	// corpus is not set up on this process.
	Corpus *corpus.Service
}

// console holds the dependencies every page handler shares.
type console struct {
	store     *store.Store
	sessions  auth.Sessions
	jobs      Jobs
	configDir string
	onboard   func(ctx context.Context) (*onboard.Wizard, error)
	log       *slog.Logger
	now       func() time.Time
	loc       *time.Location
	pages     map[string]*template.Template
	static    fs.FS
	targets   *target.Service
	cards     CardGrader
	fields    *formTexts
	acquire   http.Handler
	corpus    *corpus.Service
}

// New builds the console handler; it fails when a template does not parse.
func New(opts Options) (http.Handler, error) {
	return newConsole(opts, embedded)
}

func newConsole(opts Options, files fs.FS) (http.Handler, error) {
	if opts.Store == nil || opts.Sessions == nil || opts.Jobs == nil {
		return nil, errors.New("admin console: a store, sessions and the job queue are required")
	}
	c := &console{store: opts.Store, sessions: opts.Sessions, jobs: opts.Jobs, configDir: opts.ConfigDir,
		onboard: opts.Onboard, log: opts.Log, now: opts.Now, loc: opts.Location, cards: opts.Cards, acquire: opts.Acquire,
		corpus: opts.Corpus}
	if c.loc == nil {
		c.loc = zone.Display()
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.targets = opts.Targets; c.targets == nil {
		c.targets = &target.Service{Store: opts.Store, Location: c.loc}
	}
	parsed, err := pages.Parse(files, c.withTargetFuncs(c.funcs()))
	if err != nil {
		return nil, fmt.Errorf("admin console: %w", err)
	}
	c.pages = parsed
	if c.fields, err = readFormTexts(files); err != nil {
		return nil, fmt.Errorf("admin console: %w", err)
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		return nil, fmt.Errorf("admin console: %w", err)
	}
	c.static = static
	return c.routes(), nil
}

func (c *console) routes() http.Handler {
	mux := http.NewServeMux()
	v, o, a := auth.RoleViewer, auth.RoleOperator, auth.RoleAdmin
	mux.Handle("GET "+Prefix+"/static/", http.StripPrefix(Prefix+"/static/", c.staticHandler(c.static)))
	mux.HandleFunc("GET "+Prefix+"/login", c.loginShow)
	mux.HandleFunc("POST "+Prefix+"/login", c.loginSubmit)
	mux.HandleFunc("POST "+Prefix+"/logout", c.logout)
	mux.Handle("GET "+Prefix+"/{$}", c.require(v, c.overviewShow))
	mux.Handle("GET "+Prefix+"/sites", c.require(v, c.siteList))
	mux.Handle("GET "+Prefix+"/sites/{code}", c.require(v, c.siteShow))
	mux.Handle("POST "+Prefix+"/targets/{code}/crawl", c.require(o, c.targetCrawl))
	c.targetRoutes(mux, v, o)
	mux.Handle("GET "+Prefix+"/hosts", c.require(v, c.hostList))
	mux.Handle("POST "+Prefix+"/hosts/{host}/clear", c.require(a, c.hostClear))
	mux.Handle("GET "+Prefix+"/adapters", c.require(v, c.adapterList))
	mux.Handle("GET "+Prefix+"/adapters/{id}", c.require(v, c.adapterShow))
	mux.Handle("POST "+Prefix+"/adapters/{id}/detect", c.require(o, c.adapterDetect))
	mux.Handle("GET "+Prefix+"/onboard", c.require(o, c.onboardNew))
	mux.Handle("POST "+Prefix+"/onboard", c.require(o, c.onboardCreate))
	mux.Handle("GET "+Prefix+"/onboard/departments", c.require(o, c.onboardDeptSearch))
	mux.Handle("GET "+Prefix+"/onboard/{id}", c.require(o, c.onboardShow))
	mux.Handle("GET "+Prefix+"/onboard/{id}/progress", c.require(o, c.onboardProgress))
	mux.Handle("POST "+Prefix+"/onboard/{id}", c.require(o, c.onboardSubmit))
	mux.Handle("POST "+Prefix+"/onboard/{id}/cancel", c.require(o, c.onboardCancel))
	mux.Handle("GET "+Prefix+"/onboard/{id}/preview", c.require(o, c.onboardPreview))
	mux.Handle("GET "+Prefix+"/onboard/{id}/drafts.zip", c.require(o, c.onboardDownload))
	mux.Handle("GET "+Prefix+"/studio", c.require(o, c.studioShow))
	mux.Handle("POST "+Prefix+"/studio", c.require(o, c.studioRun))
	mux.Handle("GET "+Prefix+"/studio/crawl/{id}", c.require(o, c.studioCrawlShow))
	mux.Handle("GET "+Prefix+"/studio/crawl/{id}/progress", c.require(o, c.studioCrawlProgress))
	mux.Handle("POST "+Prefix+"/studio/crawl/{id}/cancel", c.require(o, c.studioCrawlCancel))
	mux.Handle("GET "+Prefix+"/crawl-logs", c.require(v, c.crawlLogList))
	mux.Handle("GET "+Prefix+"/articles", c.require(v, c.articleList))
	mux.Handle("GET "+Prefix+"/articles/{id}", c.require(v, c.articleShow))
	mux.Handle("GET "+Prefix+"/departments", c.require(v, c.departmentList))
	mux.Handle("POST "+Prefix+"/departments/import", c.require(o, c.departmentImport))
	mux.Handle("GET "+Prefix+"/departments/{id}", c.require(v, c.departmentShow))
	mux.Handle("GET "+Prefix+"/stale-targets", c.require(v, c.staleTargetList))
	mux.Handle("GET "+Prefix+"/jobs", c.require(v, c.jobList))
	mux.Handle("GET "+Prefix+"/audit", c.require(v, c.auditList))
	c.reviewRoutes(mux, v, o)
	c.corpusRoutes(mux, v, o, a)
	mux.Handle(Prefix+"/", c.require(v, func(w http.ResponseWriter, r *http.Request) {
		c.notFound(w, r, "页面不存在")
	}))
	return securityHeaders(c.plainQuery(mux))
}

// plainQuery refuses a request whose query holds a control character or
// invalid UTF-8 before any page reads it: such a filter word is never
// meant, and a filter given one can stop filtering.
func (c *console) plainQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, bad := pages.BadParam(r.URL.Query(), false)
		if !bad {
			next.ServeHTTP(w, r)
			return
		}
		if p, err := c.sessions.Authenticate(r); err == nil && p != nil {
			// The refusal page keeps the signed-in person's menu.
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		}
		c.render(w, r, http.StatusBadRequest, "error", page{Title: "请求无效",
			Data: errorData{Code: http.StatusBadRequest, Heading: "请求无效", Message: pages.BadParamMessage(name)}})
	})
}

// securityHeaders keeps the console's pages out of frames and caches and
// lets the browser run only the console's own script file.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// staticHandler serves the console's own files and nothing else: a
// directory (the folder itself, with or without its slash) or a name that is
// not a valid file name (invalid UTF-8, "..") is not found rather than a
// listing or a server error.
func (c *console) staticHandler(files fs.FS) http.Handler {
	fsrv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !staticFile(files, r.URL.Path) {
			c.notFound(w, r, "文件不存在")
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// staticFile reports whether name is a regular file of files.
func staticFile(files fs.FS, name string) bool {
	if name == "" || !utf8.ValidString(name) || !fs.ValidPath(name) {
		return false
	}
	info, err := fs.Stat(files, name)
	return err == nil && info.Mode().IsRegular()
}
