package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/acquire"
	"zhizhi/internal/fetch"
)

// studioHost is the test portal the Studio is tried on.
const studioHost = "www.studio.gov.test"

// studioArticle is a government notice with its public attributes block.
const studioArticle = `<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>关于开展2026年春季植树活动的通知</title></head>
<body><div class="nav"><a href="/">首页</a></div>
<table class="attrs"><tr><td>索引号：</td><td>11441800MB2C12345X/2026-00012</td><td>发布机构：</td><td>清远市林业局</td></tr>
<tr><td>文号：</td><td>清林〔2026〕3号</td><td>发布日期：</td><td>2026-03-01</td></tr></table>
<div class="article"><h1>关于开展2026年春季植树活动的通知</h1>
<p>各县（市、区）林业主管部门：为推进国土绿化，现就开展2026年春季义务植树活动有关事项通知如下，请结合实际认真组织实施。</p>
<p>一、活动时间为3月上旬至4月中旬。二、各单位要做好苗木调配和安全保障工作，确保活动有序开展。</p></div></body></html>`

// studioHostile is a page whose text and markup try to run script in
// whatever shows it.
const studioHostile = `<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>恶意页面<script>window.__pwned="title"</script></title>
<script>window.__pwned = "page script";</script></head>
<body><div class="article"><h1>测试页面</h1>
<p>这一段正文足够长，正文提取器会把它当作正文保留下来，里面写着 &lt;script&gt;window.__pwned="text"&lt;/script&gt; 和
&lt;img src=x onerror="window.__pwned='img'"&gt; 两段代码，只应当作文字显示。</p>
<img src="x" onerror="window.__pwned='markup img'"><a href="javascript:window.__pwned='link'">点我</a></div></body></html>`

// studioSite serves the test portal: the notice, the hostile page, a
// page robots.txt disallows, and /list/ pages linking on (for crawls),
// with /slow/hang.html held until release is closed.
type studioSite struct {
	addr    string
	release chan struct{}
	once    sync.Once
}

func newStudioSite(t *testing.T) *studioSite {
	t.Helper()
	s := &studioSite{release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { s.free(); srv.Close() })
	s.addr = ln.Addr().String()
	return s
}

func (s *studioSite) free() { s.once.Do(func() { close(s.release) }) }

func (s *studioSite) serve(w http.ResponseWriter, r *http.Request) {
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}
	list := func(links string) string {
		return `<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>栏目页` + r.URL.Path + `</title></head><body><div class="article"><h1>栏目</h1>` +
			`<p>这是用于测试小规模爬取的栏目页面，正文足够长，可以被正文提取器识别为正文，并列出下级页面的链接。</p>` + links + `</div></body></html>`
	}
	switch r.URL.Path {
	case "/robots.txt":
		io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
	case "/article.html":
		html(studioArticle)
	case "/hostile.html":
		html(studioHostile)
	case "/private/a.html":
		html(studioArticle)
	case "/notice.pdf":
		b, err := os.ReadFile(filepath.Join("..", "pdf", "testdata", "text-zh.pdf"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(b)
	case "/list/":
		var b strings.Builder
		for i := range 8 {
			fmt.Fprintf(&b, `<a href="/list/%d.html">第%d篇</a> `, i, i)
		}
		html(list(b.String()))
	case "/slow/":
		html(list(`<a href="/slow/hang.html">慢页面</a> <a href="/slow/1.html">第1篇</a>`))
	case "/slow/hang.html":
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		html(list(""))
	default:
		if strings.HasPrefix(r.URL.Path, "/list/") {
			html(list(`<a href="/list/">返回</a>`))
			return
		}
		http.NotFound(w, r)
	}
}

// sum is the SHA-256 of a page as the site sends it.
func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// studioWorld is the console's world with the acquisition API on the
// test portal, its crawl jobs worked in this process.
func studioWorld(t *testing.T) (*world, *studioSite) {
	t.Helper()
	w := sqliteWorld(t)
	site := newStudioSite(t)
	c, err := fetch.NewClient(fetch.ClientOptions{Store: w.st, Version: "test", ContactURL: "https://zhizhi.example/contact",
		Resolve: fetch.ResolveMap{studioHost: site.addr}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetSitePolicy(studioHost, fetch.SitePolicy{Owned: true, RespectRobots: true, Interval: time.Millisecond, Burst: 100})
	ctx, cancel := context.WithCancel(context.Background())
	jobs := &studioJobs{ctx: ctx, t: t}
	t.Cleanup(func() { cancel(); site.free(); jobs.wg.Wait() })
	api, err := acquire.New(acquire.Deps{Store: w.st, Client: c, Jobs: jobs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	jobs.api = api
	h, err := New(Options{Store: w.st, Sessions: w.sessions, Jobs: w.q, ConfigDir: w.cfgDir,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now }, Acquire: api.Handler()})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w, site
}

// studioJobs works crawl jobs in this process, as serve's queue does.
type studioJobs struct {
	api *acquire.API
	ctx context.Context
	t   *testing.T
	wg  sync.WaitGroup
}

func (j *studioJobs) StartCrawlJob(_ context.Context, id string) error {
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		for j.ctx.Err() == nil {
			finished, err := j.api.RunCrawlJob(j.ctx, id, nil)
			if err != nil && j.ctx.Err() == nil {
				j.t.Errorf("crawl job %s: %v", id, err)
				return
			}
			if finished {
				return
			}
		}
	}()
	return nil
}

func studioAsk(u, mode string, extra ...string) url.Values {
	v := url.Values{"url": {u}, "mode": {mode}, "main_only": {"1"}, "links": {"1"}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}

// TestStudioGuarded: the Studio is an operator's page — signed out is
// sent to the login form, a viewer is refused every route of it, and
// the menu leads an operator to it.
func TestStudioGuarded(t *testing.T) {
	w, _ := studioWorld(t)
	rec := w.get(t, "/admin/studio", nil)
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/admin/login") {
		t.Errorf("signed out: %d to %q, want the login form", rec.Code, rec.Header().Get("Location"))
	}
	viewer := w.login(t, "viewer")
	form := studioAsk("http://"+studioHost+"/article.html", "fetch")
	for _, c := range []struct {
		method, path string
	}{
		{"GET", "/admin/studio"}, {"POST", "/admin/studio"}, {"GET", "/admin/studio/crawl/x"},
		{"GET", "/admin/studio/crawl/x/progress"}, {"POST", "/admin/studio/crawl/x/cancel"},
	} {
		var code int
		if c.method == "GET" {
			code = w.get(t, c.path, viewer).Code
		} else {
			code = w.post(t, c.path, viewer, form).Code
		}
		if code != http.StatusForbidden {
			t.Errorf("viewer %s %s: %d, want 403", c.method, c.path, code)
		}
	}
	op := w.login(t, "operator")
	rec = w.get(t, "/admin/studio", op)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<a href="/admin/studio" class="active"`) ||
		!strings.Contains(rec.Body.String(), `name="mode" value="crawl"`) {
		t.Errorf("operator: %d\n%s", rec.Code, rec.Body)
	}
}

// TestStudioAnswers: each refusal is said in Chinese with what to do,
// and a fetched page's markup reaches the console only as text.
func TestStudioAnswers(t *testing.T) {
	w, _ := studioWorld(t)
	op := w.login(t, "operator")
	for _, c := range []struct {
		name string
		form url.Values
		want []string
		not  []string
	}{
		{"notice", studioAsk("http://"+studioHost+"/article.html", "fetch"),
			[]string{"开展2026年春季义务植树活动", "清林〔2026〕3号", "清远市林业局", sum(studioArticle), "控制台会话不计入配额", "直接请求", "允许抓取"},
			// The fetch time on the console's clock face, not the API's UTC.
			[]string{">allowed<", "Z</", ":00Z"}},
		{"hostile page as text", studioAsk("http://"+studioHost+"/hostile.html", "fetch", "raw_html", "1"),
			// The Markdown writes the page's "<" as "&lt;"; the console shows
			// those characters, and the raw source, as text.
			[]string{`&amp;lt;script&amp;gt;window.\_\_pwned=&#34;text&#34;`, `&lt;script&gt;window.__pwned = &#34;page script&#34;;&lt;/script&gt;`},
			[]string{`<script>window`, `<img src="x" onerror`, `href="javascript:`}},
		{"robots", studioAsk("http://"+studioHost+"/private/a.html", "fetch"),
			[]string{"robots.txt 不允许抓取这个地址", "ROBOTS_DISALLOWED"}, []string{"植树"}},
		{"ssrf", studioAsk("http://10.1.2.3/", "fetch"),
			[]string{"该地址被安全防护拒绝", "内网"}, nil},
		{"no browser", studioAsk("http://"+studioHost+"/article.html", "render"),
			[]string{"服务器上没有可用的浏览器", "安装"}, nil},
		{"pdf parse", studioAsk("http://"+studioHost+"/notice.pdf", "pdf", "pdf_action", "parse"),
			[]string{"解析结果", "市人民政府办公厅关于印发二〇二六年政务公开工作要点的通知", "允许抓取"}, []string{"此功能尚未启用"}},
		{"pdf inspect", studioAsk("http://"+studioHost+"/notice.pdf", "pdf"),
			[]string{"检查结果", "页数"}, []string{"此功能尚未启用"}},
		{"not a web address", studioAsk("file:///etc/passwd", "fetch"),
			[]string{"请填写以 http:// 或 https:// 开头的完整网址"}, nil},
		{"crawl limit over the Studio's", studioAsk("http://"+studioHost+"/list/", "crawl", "limit", "500"),
			[]string{"页数上限请填 1 到 20 之间的整数"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := w.post(t, "/admin/studio", op, c.form)
			body := rec.Body.String()
			for _, s := range c.want {
				if !strings.Contains(body, s) {
					t.Errorf("the page lacks %q (status %d)", s, rec.Code)
				}
			}
			for _, s := range c.not {
				if strings.Contains(body, s) {
					t.Errorf("the page carries %q", s)
				}
			}
		})
	}
}

// TestStudioWithoutAPI: a console with no acquisition API says so and
// refuses to run.
func TestStudioWithoutAPI(t *testing.T) {
	w := sqliteWorld(t)
	op := w.login(t, "operator")
	if rec := w.get(t, "/admin/studio", op); !strings.Contains(rec.Body.String(), "没有启用获取接口") {
		t.Errorf("the page does not say the API is off:\n%s", rec.Body)
	}
	if rec := w.post(t, "/admin/studio", op, studioAsk("http://"+studioHost+"/article.html", "fetch")); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("run without the API: %d, want 503", rec.Code)
	}
}
