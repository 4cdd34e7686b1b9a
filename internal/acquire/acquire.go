package acquire

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// Defaults of Deps.
const (
	DefaultMaxBytes       = 10 << 20
	DefaultTimeout        = 30 * time.Second
	DefaultMaxTimeout     = 120 * time.Second
	maxRequestBody        = 64 << 10
	maxURLLength          = 4096
	maxSelectors          = 50
	maxSelectorLength     = 300
	providerDirect        = "direct"
	robotsAllowed         = "allowed"
	robotsNotAsked        = "not asked (answered from a stored snapshot)"
	normalizedFormatLabel = "markdown"
)

// Patterns are the routes Routes registers.
var Patterns = append([]string{"POST /v1/fetch", "POST /v2/scrape", renderPattern, pdfInspectPattern, pdfParsePattern}, crawlRoutes()...)

// crawlRoutes are the crawl job routes under /v1 and /v2.
func crawlRoutes() []string {
	var out []string
	for _, p := range crawlPatterns {
		out = append(out, p, strings.Replace(p, " /v1/", " /v2/", 1))
	}
	return out
}

// Deps are what the API works with.
type Deps struct {
	Store  *store.Store
	Client *fetch.Client // the polite client; every request goes through it
	Now    func() time.Time
	Logger *slog.Logger
	// MaxBytes bounds a page's body, whatever a request asks (max_bytes
	// may only lower it); 0 means DefaultMaxBytes.
	MaxBytes int64
	// DefaultTimeout is a request's time when it names none; MaxTimeout
	// the most it may ask for (more is cut to it, as Firecrawl does).
	DefaultTimeout, MaxTimeout time.Duration
	// Budget, when set, meters each request of an API key (the principal
	// auth.Service.Middleware put on the request's context): reserved
	// before the site is asked, settled with what it cost, cancelled when
	// it was refused before anything was sent. *budget.Service is one.
	// Console sessions and requests with no key are not metered.
	Budget Budget
	// Render is the browser tier of POST /v1/render (render.go); nil:
	// /v1/render answers 503 BROWSER_UNAVAILABLE.
	Render *RenderTier
	// Jobs queues crawl jobs (POST /v1/crawl), whose work RunCrawlJob
	// does wherever they are taken up; nil: crawl jobs answer 503
	// CRAWL_JOBS_UNAVAILABLE.
	Jobs Jobs
	// CrawlPageSize is how many pages one GET of a crawl job returns at
	// most; zero means DefaultCrawlPageSize.
	CrawlPageSize int
	// PDFMaxBytes bounds a PDF of /v1/pdf/*, uploaded or fetched (a
	// request's max_bytes may only lower it); 0 means DefaultPDFMaxBytes.
	PDFMaxBytes int64
}

// Budget reserves a request's estimate against its key's daily budgets
// (*budget.Service).
type Budget interface {
	Reserve(ctx context.Context, keyID int64, est budget.Cost) (*budget.Reservation, error)
}

// API serves the acquisition endpoints.
type API struct {
	d Deps
}

// New checks deps and returns the API.
func New(d Deps) (*API, error) {
	if d.Store == nil || d.Client == nil {
		return nil, errors.New("acquisition api: a store and a fetch client are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.MaxBytes <= 0 {
		d.MaxBytes = DefaultMaxBytes
	}
	if d.MaxTimeout <= 0 {
		d.MaxTimeout = DefaultMaxTimeout
	}
	if d.DefaultTimeout <= 0 {
		d.DefaultTimeout = DefaultTimeout
	}
	d.DefaultTimeout = min(d.DefaultTimeout, d.MaxTimeout)
	return &API{d: d}, nil
}

// Routes registers the API's Patterns on mux.
func (a *API) Routes(mux *http.ServeMux) {
	for _, p := range Patterns {
		h := a.fetchPage
		switch strings.Replace(p, " /v2/", " /v1/", 1) {
		case renderPattern:
			h = a.renderPage
		case crawlStartPattern:
			h = a.startCrawl
		case crawlStatusPattern:
			h = a.crawlStatus
		case crawlErrorsPattern:
			h = a.crawlErrors
		case crawlCancelPattern:
			h = a.cancelCrawl
		case pdfInspectPattern:
			h = a.inspectPDF
		case pdfParsePattern:
			h = a.parsePDF
		}
		mux.HandleFunc(p, h)
	}
}

// Handler is the API on a mux of its own.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	a.Routes(mux)
	return mux
}
