package acquire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/fetch"
	"zhizhi/internal/store"
)

// Hosts of the crawl test site, all served by one listener.
const (
	crawlHost = "www.crawl.gov.test"
	crawlSub  = "sub.crawl.gov.test"
	hookHost  = "hooks.gov.test"
	// ssrfHost is a name whose subdomains are the SSRF table's names:
	// a job started on it with allowSubdomains has them in its scope.
	ssrfHost = "gov.test"
)

// sectionSize is the pages of each section (/news/, /docs/) of the crawl
// site: page k links to 2k+1 and 2k+2, so /news/k is at depth
// 1+floor(log2(k+1)) from the home page.
const sectionSize = 31

// crawlSite is a site made for crawl jobs: a home page linking two
// sections, a page robots.txt disallows, a subdomain, an outside host, a
// redirect, a sitemap, and a webhook receiver, with every request logged
// in order.
type crawlSite struct {
	addr string

	mu      sync.Mutex
	log     []string // "host path?query", in order
	hooks   []hookEvent
	sitemap string // body of /sitemap.xml; "" answers 404
	// hold, when set, makes a request for that path wait until it is
	// closed (a page under way when a job is cancelled).
	holdPath string
	hold     chan struct{}
	arrived  chan struct{}
	ssrfPage string // the links of gov.test/ssrf.html
}

func newCrawlSite(t testing.TB) *crawlSite {
	t.Helper()
	s := &crawlSite{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.addr = ln.Addr().String()
	return s
}

// withCrawlSite puts the crawl site's hosts in the client's resolve map.
func withCrawlSite(s *crawlSite) envOption {
	return func(o *fetch.ClientOptions, d *Deps) {
		for _, h := range []string{crawlHost, crawlSub, hookHost, ssrfHost} {
			o.Resolve[h] = s.addr
		}
	}
}

func crawlHTML(body string) string {
	return `<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>页面` +
		`</title></head><body><div class="article"><h1>页面</h1><p>这是一个用于测试采集任务的页面，内容足够长，可以被正文提取器识别为正文。</p>` + body + `</div></body></html>`
}

func (s *crawlSite) serve(w http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	s.mu.Lock()
	if host != hookHost {
		s.log = append(s.log, host+" "+r.URL.RequestURI())
	}
	hold, holdPath, arrived := s.hold, s.holdPath, s.arrived
	s.mu.Unlock()
	if hold != nil && r.URL.Path == holdPath {
		close(arrived)
		<-hold
	}
	page := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, crawlHTML(body))
	}
	switch {
	case host == hookHost:
		var e hookEvent
		if err := json.NewDecoder(r.Body).Decode(&e); err == nil {
			s.mu.Lock()
			s.hooks = append(s.hooks, e)
			s.mu.Unlock()
		}
		if r.Header.Get("X-Hook-Secret") != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
		}
		return
	case r.URL.Path == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
	case r.URL.Path == "/sitemap.xml":
		s.mu.Lock()
		sm := s.sitemap
		s.mu.Unlock()
		if sm == "" || host != crawlHost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, sm)
	case r.URL.Path == "/go":
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	case host == ssrfHost && r.URL.Path == "/ssrf.html":
		s.mu.Lock()
		links := s.ssrfPage
		s.mu.Unlock()
		page(links)
	case host == crawlSub:
		switch r.URL.Path {
		case "/", "/s1.html":
			page(`<a href="/s1.html">子站一</a> <a href="/s2.html">子站二</a>`)
		case "/s2.html":
			page(`<a href="http://` + crawlHost + `/">主站</a>`)
		default:
			http.NotFound(w, r)
		}
	case host != crawlHost:
		http.NotFound(w, r)
	case r.URL.Path == "/":
		page(`<a href="/news/0.html">新闻</a> <a href="/docs/0.html">文件</a> <a href="/private/0.html">内部</a>
<a href="/news/0.html#top">新闻（锚点）</a> <a href="/news/0.html?utm_source=x">新闻（跟踪参数）</a>
<a href="http://` + crawlSub + `/s1.html">子站</a> <a href="http://www.other.gov.test/o.html">外站</a>
<a href="mailto:a@b.gov.test">邮件</a> <a href="/moved.html">旧址</a> <a href="/go?to=http%3A%2F%2Fwww.other.gov.test%2F">外跳</a>`)
	case r.URL.Path == "/moved.html":
		w.Header().Set("Location", "/docs/0.html")
		w.WriteHeader(http.StatusMovedPermanently)
	case strings.HasPrefix(r.URL.Path, "/private/"):
		page(`内部页面`)
	default:
		var section string
		var k int
		if _, err := fmt.Sscanf(r.URL.Path, "/%4s/%d.html", &section, &k); err != nil || k < 0 || k >= sectionSize ||
			(section != "news" && section != "docs") {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		for _, c := range []int{2*k + 1, 2*k + 2} {
			if c < sectionSize {
				fmt.Fprintf(&b, `<a href="/%s/%d.html">第%d篇</a> `, section, c, c)
			}
		}
		b.WriteString(`<a href="/">首页</a>`)
		page(b.String())
	}
}

// pages returns the site's page requests (robots.txt, sitemap.xml and the
// webhook's left out), in order.
func (s *crawlSite) pages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.log {
		if !strings.HasSuffix(l, " /robots.txt") && !strings.HasSuffix(l, " /sitemap.xml") {
			out = append(out, l)
		}
	}
	return out
}

func (s *crawlSite) events() []hookEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hookEvent(nil), s.hooks...)
}

// twice returns the requests the site got more than once.
func twice(log []string) []string {
	seen := map[string]int{}
	var out []string
	for _, l := range log {
		if seen[l]++; seen[l] == 2 {
			out = append(out, l)
		}
	}
	return out
}

// localJobs runs crawl jobs in this process, as serve's queue would: a
// job that stops without finishing is run again, by the API last set.
type localJobs struct {
	mu  sync.Mutex
	api *API
	wg  sync.WaitGroup
	ctx context.Context
	t   testing.TB
}

func (l *localJobs) StartCrawlJob(ctx context.Context, id string) error {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for l.ctx.Err() == nil {
			l.mu.Lock()
			a := l.api
			l.mu.Unlock()
			finished, err := a.RunCrawlJob(l.ctx, id, nil)
			if err != nil {
				l.t.Errorf("crawl job %s: %v", id, err)
				return
			}
			if finished {
				return
			}
		}
	}()
	return nil
}

// withJobs runs the API's crawl jobs in this process.
func withJobs(t testing.TB) (envOption, *localJobs) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &localJobs{ctx: ctx, t: t}
	t.Cleanup(func() {
		cancel()
		l.wg.Wait()
	})
	return func(o *fetch.ClientOptions, d *Deps) { d.Jobs = l }, l
}

// crawlEnv is an env whose API runs crawl jobs on the crawl site.
type crawlEnv struct {
	*env
	site *crawlSite
	jobs *localJobs
}

func newCrawlEnv(t *testing.T, st *store.Store, opts ...envOption) *crawlEnv {
	t.Helper()
	site := newCrawlSite(t)
	jo, jobs := withJobs(t)
	e := newEnv(t, st, append([]envOption{withCrawlSite(site), jo}, opts...)...)
	jobs.api = e.api
	return &crawlEnv{env: e, site: site, jobs: jobs}
}

// crawlAnswer is a decoded crawl job answer.
type crawlAnswer struct {
	status int
	raw    []byte

	Success       bool         `json:"success"`
	ID            string       `json:"id"`
	URL           string       `json:"url"`
	Status        string       `json:"status"`
	Total         int          `json:"total"`
	Completed     int          `json:"completed"`
	CreditsUsed   int64        `json:"creditsUsed"`
	ExpiresAt     string       `json:"expiresAt"`
	Next          string       `json:"next"`
	Data          []Document   `json:"data"`
	Errors        []crawlError `json:"errors"`
	RobotsBlocked []string     `json:"robotsBlocked"`
	Error         string       `json:"error"`
	Code          string       `json:"code"`
}

// do sends method to url (absolute, or a path on the API's server) with
// body and headers, and checks the answer against openapi.yaml.
func do(t testing.TB, srvURL, method, path string, body any, hdr ...string) *crawlAnswer {
	t.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = srvURL + path
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := body.(string); ok {
			b = []byte(s)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	a := &crawlAnswer{status: resp.StatusCode}
	a.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(a.raw, a); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%v): %s", method, target, err, a.raw)
	}
	p := req.URL.RequestURI()
	checkSpecOf(t, method, p, &answer{status: resp.StatusCode, header: resp.Header, raw: a.raw})
	return a
}

// startJob posts a crawl job and fails the test unless it is accepted.
func startJob(t testing.TB, srvURL string, body map[string]any, hdr ...string) string {
	t.Helper()
	a := do(t, srvURL, http.MethodPost, "/v1/crawl", body, hdr...)
	if a.status != http.StatusOK || !a.Success || a.ID == "" || a.URL != srvURL+"/v1/crawl/"+a.ID {
		t.Fatalf("POST /v1/crawl %v: %d %s", body, a.status, a.raw)
	}
	return a.ID
}

// waitJob polls the job until it is no longer scraping and returns its
// last status with every page of its data, following next.
func waitJob(t testing.TB, srvURL, id string, hdr ...string) *crawlAnswer {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := do(t, srvURL, http.MethodGet, "/v1/crawl/"+id, nil, hdr...)
		if a.status != http.StatusOK {
			t.Fatalf("GET /v1/crawl/%s: %d %s", id, a.status, a.raw)
		}
		if a.Status != "scraping" {
			for next := a.Next; next != ""; {
				b := do(t, srvURL, http.MethodGet, next, nil, hdr...)
				if b.status != http.StatusOK || len(b.Data) == 0 {
					t.Fatalf("GET %s: %d %s", next, b.status, b.raw)
				}
				a.Data = append(a.Data, b.Data...)
				next = b.Next
			}
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawl job %s still scraping after 2 minutes: %s", id, a.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sourcePaths are the URLs of a job's pages.
func sourcePaths(docs []Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Metadata.SourceURL)
	}
	return out
}
