package acquire

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Routes of crawl jobs.
const (
	crawlStartPattern  = "POST /v1/crawl"
	crawlStatusPattern = "GET /v1/crawl/{id}"
	crawlErrorsPattern = "GET /v1/crawl/{id}/errors"
	crawlCancelPattern = "DELETE /v1/crawl/{id}"
)

// crawlPatterns are the crawl job routes, each also under /v2 (Firecrawl's
// current paths).
var crawlPatterns = []string{crawlStartPattern, crawlStatusPattern, crawlErrorsPattern, crawlCancelPattern}

// Crawl job defaults.
const (
	// CrawlJobKept is how long a job's results are kept after it started
	// (its expiresAt), as Firecrawl keeps them.
	CrawlJobKept = 24 * time.Hour
	// DefaultCrawlPageSize is how many pages one GET of a job returns at
	// most; next names the rest.
	DefaultCrawlPageSize = 20
	// crawlPageBytes bounds one GET's pages (at least one is sent).
	crawlPageBytes = 8 << 20
)

// Error codes of crawl jobs.
const (
	CodeNotFound        = "NOT_FOUND"
	CodeJobsUnavailable = "CRAWL_JOBS_UNAVAILABLE"
	// CodeBudgetExceeded is budget.WriteError's code, said in the API's
	// own words when a crawl job's or an OCR parse's budget runs out.
	CodeBudgetExceeded = "BUDGET_EXCEEDED"
)

// Jobs queues a crawl job's work (*queue.Queue in serve): whichever
// process takes it up calls API.RunCrawlJob.
type Jobs interface {
	StartCrawlJob(ctx context.Context, id string) error
}

// owner names the caller a job belongs to: an API key, a console user, or
// "anonymous" when the API runs with no guard in front (tests).
func owner(r *http.Request) (string, *int64) {
	p, ok := auth.FromContext(r.Context())
	switch {
	case !ok:
		return "anonymous", nil
	case p.APIKeyID != 0:
		id := p.APIKeyID
		return "apikey:" + strconv.FormatInt(id, 10), &id
	default:
		return "user:" + strconv.FormatInt(p.UserID, 10), nil
	}
}

// apiBase is the scheme, host and version prefix ("/v1" or "/v2") the
// request came in on, for the absolute URLs of the answer.
func apiBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	version := "/v1"
	if strings.HasPrefix(r.URL.Path, "/v2/") {
		version = "/v2"
	}
	return scheme + "://" + r.Host + version
}

func newJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// startCrawl serves POST /v1/crawl and /v2/crawl: the request is checked,
// the start URL judged by the SSRF guard, and the job recorded and queued.
func (a *API) startCrawl(w http.ResponseWriter, r *http.Request) {
	if a.d.Jobs == nil {
		a.fail(w, r, &failure{status: http.StatusServiceUnavailable, code: CodeJobsUnavailable,
			msg: "crawl jobs run on zhizhi serve's job queue, which this server does not have"})
		return
	}
	o, _, err := a.parseCrawl(w, r)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	// The URL as given is judged, before it is normalized (which would
	// drop user information the guard refuses).
	err = a.d.Client.CheckTarget(r.Context(), fetch.Request{URL: o.URL, Purpose: model.PurposeProbe})
	var start string
	if err == nil {
		if start, err = extract.NormalizeURL(o.URL); err != nil {
			err = invalid("url: %q is not a web page's URL", o.URL)
		}
	}
	if err != nil {
		var f *failure
		if !errors.As(err, &f) {
			f = fetchFailure(r.Context(), &fetchRequest{URL: o.URL}, err, a.d.Now())
		}
		a.fail(w, r, f)
		return
	}
	o.URL = start
	opts, err := json.Marshal(o)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	who, key := owner(r)
	now := a.d.Now().UTC()
	j := &store.CrawlJob{ID: newJobID(), Owner: who, APIKeyID: key, URL: start, Options: string(opts), Limit: o.Limit,
		Created: now, Expires: now.Add(CrawlJobKept)}
	if err := a.d.Store.CreateCrawlJob(r.Context(), j); err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	if err := a.d.Jobs.StartCrawlJob(r.Context(), j.ID); err != nil {
		a.d.Logger.Error("acquire crawl: queue job", "job", j.ID, "error", err)
		_ = a.d.Store.FinishCrawlJob(context.WithoutCancel(r.Context()), j.ID, 0, store.CrawlFailed, CodeInternal, "the job could not be queued")
		a.fail(w, r, &failure{status: http.StatusServiceUnavailable, code: CodeJobsUnavailable, msg: "the job could not be queued; try again later"})
		return
	}
	a.d.Logger.Info("acquire crawl job started", "job", j.ID, "url", start, "limit", o.Limit, "owner", who)
	writeJSON(w, http.StatusOK, struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
		URL     string `json:"url"`
	}{true, j.ID, apiBase(r) + "/crawl/" + j.ID})
}

// ownJob returns the caller's job named by the path, or answers 404: a
// job of another caller is answered exactly as one that does not exist.
func (a *API) ownJob(w http.ResponseWriter, r *http.Request) (*store.CrawlJob, bool) {
	id := r.PathValue("id")
	j, err := a.d.Store.CrawlJob(r.Context(), id)
	who, _ := owner(r)
	if errors.Is(err, store.ErrNotFound) || err == nil && (j.Owner != who || !a.d.Now().Before(j.Expires)) {
		a.fail(w, r, &failure{status: http.StatusNotFound, code: CodeNotFound,
			msg: fmt.Sprintf("no crawl job %q of yours (a job's results are kept %d hours)", id, int(CrawlJobKept/time.Hour))})
		return nil, false
	}
	if err != nil {
		a.fail(w, r, asFailure(err))
		return nil, false
	}
	return j, true
}

// crawlStatus is the answer of GET /v1/crawl/{id}.
type crawlStatus struct {
	Success     bool              `json:"success"`
	Status      string            `json:"status"`
	Total       int               `json:"total"`
	Completed   int               `json:"completed"`
	CreditsUsed int64             `json:"creditsUsed"`
	ExpiresAt   string            `json:"expiresAt"`
	Next        *string           `json:"next,omitempty"`
	Data        []json.RawMessage `json:"data"`
	Error       string            `json:"error,omitempty"`
	Code        string            `json:"code,omitempty"`
}

// total is the pages a job has asked for and, while it runs, those it
// will still ask for within its limit.
func total(j *store.CrawlJob) int {
	if j.State != store.CrawlScraping {
		return j.Asked
	}
	return min(j.Limit, j.Asked+j.Queued)
}

// crawlStatus serves GET /v1/crawl/{id}: the job's state and its answered
// pages from ?skip=N on, a page at a time; next is the absolute URL of the
// following page while more are stored.
func (a *API) crawlStatus(w http.ResponseWriter, r *http.Request) {
	j, ok := a.ownJob(w, r)
	if !ok {
		return
	}
	skip := 0
	if s := r.URL.Query().Get("skip"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			a.fail(w, r, invalid("skip: a whole number from 0 expected"))
			return
		}
		skip = n
	}
	size := a.d.CrawlPageSize
	if size <= 0 {
		size = DefaultCrawlPageSize
	}
	pages, err := a.d.Store.CrawlJobDocuments(r.Context(), j.ID, skip, size)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	out := crawlStatus{Success: true, Status: j.State, Total: total(j), Completed: j.Completed, CreditsUsed: j.Credits,
		ExpiresAt: j.Expires.UTC().Format(time.RFC3339), Data: []json.RawMessage{}}
	if j.State == store.CrawlFailed {
		out.Error, out.Code = j.Error, j.ErrorCode
	}
	bytes := 0
	for _, p := range pages {
		if len(out.Data) > 0 && bytes+len(p.Document) > crawlPageBytes {
			break
		}
		bytes += len(p.Document)
		out.Data = append(out.Data, json.RawMessage(p.Document))
	}
	if n := skip + len(out.Data); n < j.Completed {
		next := apiBase(r) + "/crawl/" + j.ID + "?skip=" + strconv.Itoa(n)
		out.Next = &next
	}
	writeJSON(w, http.StatusOK, out)
}

// crawlError is one page of a job that failed or was refused.
type crawlError struct {
	ID         string `json:"id"`
	Timestamp  string `json:"timestamp"`
	URL        string `json:"url"`
	Error      string `json:"error"`
	Code       string `json:"code"`
	StatusCode int    `json:"statusCode,omitempty"`
}

// crawlErrors serves GET /v1/crawl/{id}/errors: the pages that failed or
// were refused, and the URLs robots.txt kept the job from.
func (a *API) crawlErrors(w http.ResponseWriter, r *http.Request) {
	j, ok := a.ownJob(w, r)
	if !ok {
		return
	}
	probs, err := a.d.Store.CrawlJobProblems(r.Context(), j.ID)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	out := struct {
		Success       bool         `json:"success"`
		Errors        []crawlError `json:"errors"`
		RobotsBlocked []string     `json:"robotsBlocked"`
	}{Success: true, Errors: []crawlError{}, RobotsBlocked: []string{}}
	for _, p := range probs {
		if p.State == store.PageRobots {
			out.RobotsBlocked = append(out.RobotsBlocked, p.URL)
			continue
		}
		out.Errors = append(out.Errors, crawlError{ID: j.ID + "/" + strconv.FormatInt(p.Seq, 10),
			Timestamp: p.Updated.UTC().Format(time.RFC3339), URL: p.URL, Error: p.Error, Code: p.Code, StatusCode: p.Status})
	}
	writeJSON(w, http.StatusOK, out)
}

// cancelCrawl serves DELETE /v1/crawl/{id}: a running job stops before
// its next page (the one in flight, if any, is kept); a finished job is
// left as it ended.
func (a *API) cancelCrawl(w http.ResponseWriter, r *http.Request) {
	j, ok := a.ownJob(w, r)
	if !ok {
		return
	}
	j, err := a.d.Store.CancelCrawlJob(r.Context(), j.ID)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	a.d.Logger.Info("acquire crawl job cancelled", "job", j.ID, "state", j.State)
	writeJSON(w, http.StatusOK, struct {
		Success bool   `json:"success"`
		Status  string `json:"status"`
	}{true, j.State})
}
