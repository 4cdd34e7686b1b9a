package acquire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"zhizhi/internal/fetch"
	"zhizhi/internal/fetch/ssrftest"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// t0 is where the fake clocks of these tests start.
var t0 = time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC)

// smallHost is a hand-made site beside the simulated web, for pages the
// sim does not have (navigation around an article, CJK emphasis, a PDF).
const smallHost = "www.small.gov.test"

// env is the simulated web, a small site, a store, the polite client on a
// fake clock the sim's access log shares, and the API behind an httptest
// server. Every connection the client opens is recorded, and only
// loopback can be reached.
type env struct {
	w      *sim.World
	st     *store.Store
	clock  *fetch.FakeClock
	client *fetch.Client
	api    *API
	srv    *httptest.Server

	small *smallSite

	mu    sync.Mutex
	dials []string // addresses the client dialled
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// envOption changes the client's options or the API's deps before they
// are used.
type envOption func(*fetch.ClientOptions, *Deps)

func newEnv(t testing.TB, st *store.Store, opts ...envOption) *env {
	t.Helper()
	clock := fetch.NewFakeClock(t0)
	w, err := sim.Start(context.Background(), sim.Options{Seed: 7, Clock: clock.Now})
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(w.Close)
	e := &env{w: w, st: st, clock: clock, small: newSmallSite(t)}
	resolve := fetch.ResolveMap(w.ResolveMap())
	resolve[smallHost] = e.small.addr
	copts := fetch.ClientOptions{
		Store: st, Clock: clock, Resolve: resolve, Version: "test", ContactURL: "https://zhizhi.example/contact",
		Logger: quiet(),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			e.mu.Lock()
			e.dials = append(e.dials, addr)
			e.mu.Unlock()
			ap, err := netip.ParseAddrPort(addr)
			if err != nil || !ap.Addr().IsLoopback() {
				t.Errorf("the client dialled %s; tests may only reach loopback", addr)
				return nil, fmt.Errorf("test dialer: %s is not loopback", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		// The SSRF table's names resolve from its own table; nothing
		// else is ever looked up.
		LookupIP: func(ctx context.Context, host string) ([]net.IP, error) {
			addrs, ok := ssrftest.DNS[host]
			if !ok {
				t.Errorf("unexpected DNS lookup for %q", host)
				return nil, fmt.Errorf("no DNS in tests: %s", host)
			}
			var ips []net.IP
			for _, a := range addrs {
				ips = append(ips, net.ParseIP(a))
			}
			return ips, nil
		},
	}
	deps := Deps{Store: st, Now: clock.Now, Logger: quiet()}
	for _, o := range opts {
		o(&copts, &deps)
	}
	c, err := fetch.NewClient(copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.client = c
	idle := func() bool { return c.Limiter().InFlight() == 0 }
	if copts.Browser != nil {
		// A browser visit holds its host for the whole render: the
		// page's own sub-requests wait for their tokens inside it.
		idle = nil
	}
	stop := clock.AutoAdvance(idle)
	t.Cleanup(stop)
	deps.Client = c
	e.api, err = New(deps)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.api.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) dialsNow() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.dials...)
}

func (e *env) dialCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.dials)
}

// answer is a decoded reply.
type answer struct {
	status int
	header http.Header
	raw    []byte
	// success answers
	Success bool      `json:"success"`
	Data    *Document `json:"data"`
	// failures
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Details map[string]any `json:"details"`
}

// post sends body (a string is sent as it is) to path.
func (e *env) post(t testing.TB, path string, body any) *answer {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(e.srv.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	a := &answer{status: resp.StatusCode, header: resp.Header}
	a.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(a.raw, a); err != nil {
		t.Fatalf("POST %s: answer is not JSON (%v): %s", path, err, a.raw)
	}
	checkSpec(t, path, a)
	return a
}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// checkSpec validates an answer against openapi.yaml, the description
// clients generate code from.
func checkSpec(t testing.TB, path string, a *answer) {
	t.Helper()
	checkSpecOf(t, http.MethodPost, path, a)
}

// checkSpecOf is checkSpec for an answer to method.
func checkSpecOf(t testing.TB, method, path string, a *answer) {
	t.Helper()
	specOnce.Do(func() {
		var doc *openapi3.T
		if doc, specErr = openapi3.NewLoader().LoadFromFile("../api/openapi.yaml"); specErr == nil {
			specRouter, specErr = gorillamux.NewRouter(doc)
		}
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	req := httptest.NewRequest(method, "http://zhizhi.test"+path, nil)
	route, params, err := specRouter.FindRoute(req)
	if err != nil {
		t.Fatalf("openapi.yaml has no %s: %v", path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 a.status, Header: a.header, Body: io.NopCloser(bytes.NewReader(a.raw)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s answered %d against openapi.yaml: %v\n%.500s", method, path, a.status, err, a.raw)
	}
}

// ok fetches and fails the test unless the answer is a success.
func (e *env) ok(t testing.TB, body map[string]any) *Document {
	t.Helper()
	a := e.post(t, "/v1/fetch", body)
	if a.status != http.StatusOK || !a.Success || a.Data == nil {
		t.Fatalf("fetch %v: %d %s", body, a.status, a.raw)
	}
	return a.Data
}

// truth returns the first live article of host that robots.txt allows.
func (e *env) truth(t testing.TB, host string) sim.TruthArticle {
	t.Helper()
	for _, a := range e.w.Truth() {
		if a.Host == host && !a.RobotsDisallowed && !a.Abolished {
			return a
		}
	}
	t.Fatalf("no article at %s", host)
	return sim.TruthArticle{}
}

// pathsAt returns the paths the sim served at host.
func pathsAt(w *sim.World, host string) []string {
	var out []string
	for _, a := range w.AccessLog(host) {
		out = append(out, a.Path)
	}
	return out
}

// countingSite is a test site on a free loopback port whose requests are
// counted by path.
type countingSite struct {
	addr string
	mu   sync.Mutex
	hits map[string]int
}

// serveCounted serves h as a countingSite until t ends.
func serveCounted(t testing.TB, h http.Handler) *countingSite {
	t.Helper()
	s := &countingSite{hits: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.addr = ln.Addr().String()
	return s
}

func (s *countingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// disallowPrivate is the test sites' robots.txt: all but /private/.
func disallowPrivate(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
}

// smallSite serves smallArticle and a few other pages.
type smallSite = countingSite

// smallArticle has navigation, a footer and the article between them:
// the main content is the article only.
const smallArticle = `<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>关于印发《数据管理办法》的通知_小城市人民政府</title>
<meta name="description" content="小城市人民政府关于印发数据管理办法的通知">
<style>.x{color:red}</style><script>var tracker = "脚本内容";</script></head>
<body>
<div class="nav"><a href="/">首页</a> | <a href="/jg/">机构概况</a> | <a href="/zwgk/">政务公开导航栏</a></div>
<div class="article">
<h1>关于印发《数据管理办法》的通知</h1>
<p>各镇人民政府、各部门：现将<strong>《数据管理办法》</strong>印发给你们，请认真贯彻执行。办法自发布之日起施行，全文共五章二十条，涉及数据的采集、存储、共享与开放。</p>
<p>各单位要按照<b>“谁主管、谁负责”</b>的原则落实责任，<em>定期</em>报告执行情况。执行中遇到的问题，请及时向市政务服务数据管理局反映，联系电话见附件。</p>
<table><tr><th>章</th><th>内容</th></tr><tr><td>第一章</td><td>总则</td></tr><tr><td>第二章</td><td>数据采集</td></tr></table>
<p>详见<a href="/zwgk/files/rules.html">办法全文</a>。</p>
</div>
<div class="footer">版权所有：小城市人民政府办公室 备案号 粤ICP备00000000号</div>
</body></html>`

func newSmallSite(t testing.TB) *smallSite {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", disallowPrivate)
	mux.HandleFunc("/article.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, smallArticle)
	})
	mux.HandleFunc("/notice.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "停水通知：明日上午停水。")
	})
	mux.HandleFunc("/file.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, "%PDF-1.4\n%%EOF\n")
	})
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		// /go?to=<url>: a redirect to wherever to says.
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/slow.html", func(w http.ResponseWriter, r *http.Request) {
		// Answers only once the client has given up.
		<-r.Context().Done()
	})
	return serveCounted(t, mux)
}

func smallURL(path string) string { return "http://" + smallHost + path }

var _ = strings.Contains
var _ = url.Parse
