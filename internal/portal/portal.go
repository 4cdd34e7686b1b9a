// Package portal owns the public site: summary cards anyone may browse and
// search, without an account, in Simplified Chinese. A card names its
// source and links to /go/{card}, the only door to the full text, which
// counts the click-through and sends the reader to the source site. Every
// request is counted for BotScore through Visits; the portal sets no
// cookie, loads nothing from another site, and its one script reports
// interaction event counts — never what was typed or where.
package portal

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"
	"zhizhi/internal/config/zone"
	"zhizhi/internal/pages"

	"zhizhi/internal/ledger"
	"zhizhi/internal/store"
)

// Visits counts portal requests per visitor; *ledger.Recorder implements
// it. Record must be cheap: it runs in the request path.
type Visits interface {
	Record(r *http.Request, h ledger.Hit)
}

// beaconTokens is what a Visits that checks beacons also does: hand each
// page the token its script must send back (*ledger.Recorder does).
type beaconTokens interface {
	BeaconToken(r *http.Request) string
}

// Options are the portal's dependencies.
type Options struct {
	Store *store.Store
	// Visits counts traffic for BotScore and the humans' ledger; nil
	// counts nothing.
	Visits Visits
	Now    func() time.Time
	Log    *slog.Logger
	// Location is the zone dates are shown and filtered in
	// (ZHIZHI_TIMEZONE when nil).
	Location *time.Location
}

// portal holds what every handler shares.
type portal struct {
	store  *store.Store
	visits Visits
	now    func() time.Time
	log    *slog.Logger
	loc    *time.Location
	pages  map[string]*template.Template
	static fs.FS

	// The dashboard is public and reads 30 days of both ledgers: one
	// reading per day asked serves everyone for dashboardTTL.
	dashMu sync.Mutex
	dash   map[string]cachedDashboard
}

// New builds the portal handler, to be mounted at "/"; it fails when a
// template does not parse.
func New(opts Options) (http.Handler, error) {
	if opts.Store == nil {
		return nil, errors.New("portal: a store is required")
	}
	p := &portal{store: opts.Store, visits: opts.Visits, now: opts.Now, log: opts.Log, loc: opts.Location}
	if p.loc == nil {
		p.loc = zone.Display()
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	parsed, err := pages.Parse(embedded, p.funcs())
	if err != nil {
		return nil, fmt.Errorf("portal: %w", err)
	}
	p.pages = parsed
	if p.static, err = fs.Sub(embedded, "static"); err != nil {
		return nil, fmt.Errorf("portal: %w", err)
	}
	return p.routes(), nil
}

func (p *portal) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", p.cardList)
	mux.HandleFunc("GET /card/{id}", p.cardShow)
	mux.HandleFunc("GET /go/{id}", p.doorOpen)
	mux.HandleFunc("GET /robots.txt", p.robotsShow)
	mux.HandleFunc("GET /ledger", p.ledgerShow)
	mux.HandleFunc("GET /ledger.json", p.ledgerJSON)
	mux.HandleFunc("GET /ledger/heads", p.ledgerHeads)
	mux.HandleFunc("GET /.well-known/zhizhi-ledger.key", p.ledgerKey)
	mux.HandleFunc("POST /beacon", p.beaconRecord)
	mux.Handle("GET /static/", http.StripPrefix("/static/", p.staticHandler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.record(r, ledger.Hit{Kind: ledger.KindOther})
		p.notFound(w, r, "页面不存在", "您访问的页面不存在，请返回首页浏览或搜索。")
	})
	return securityHeaders(p.plainQuery(mux))
}

// plainQuery refuses a request whose query holds a control character or
// invalid UTF-8 before any page reads it: such a search word is never
// meant, and a filter given one can stop filtering.
func (p *portal) plainQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, bad := pages.BadParam(r.URL.Query(), false); bad {
			p.record(r, ledger.Hit{Kind: ledger.KindOther})
			p.render(w, r, http.StatusBadRequest, "error", view{Title: "请求无效",
				Data: errorData{Code: http.StatusBadRequest, Heading: "请求无效", Message: pages.BadParamMessage(name)}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// record counts a request when the portal was given a recorder.
func (p *portal) record(r *http.Request, h ledger.Hit) {
	if p.visits != nil {
		p.visits.Record(r, h)
	}
}

// csp lets a portal page load only the portal's own files and talk only to
// the portal; no inline script or style, no frames.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
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

func (p *portal) staticHandler() http.Handler {
	fsrv := http.FileServerFS(p.static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !staticFile(p.static, r.URL.Path) {
			// No directory listings, and a name that cannot be a file
			// (invalid UTF-8, "..") is not found rather than a server error.
			p.record(r, ledger.Hit{Kind: ledger.KindOther})
			p.notFound(w, r, "页面不存在", "您访问的页面不存在，请返回首页浏览或搜索。")
			return
		}
		p.record(r, ledger.Hit{Kind: ledger.KindAsset})
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}
