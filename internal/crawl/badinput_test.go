package crawl_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// The hosts of the bad-input world, all served by one loopback listener.
const (
	badTplHost = "www.bad.gov.test"   // template site
	badGkHost  = "www.badgk.gov.test" // gkmlpt site
	summHost   = "www.summary.test"   // template site with access: summary
)

// jumpClock is a fetch clock whose sleeps return at once and move its time
// forward: backoff after an injected 500 costs the test nothing.
type jumpClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *jumpClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.mu.Lock()
		c.offset += d
		c.mu.Unlock()
	}
	return ctx.Err()
}

// badServer imitates a template site, a gkmlpt site and a summary-access
// site, each page chosen by the test, and logs every request.
type badServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	log   []string                               // "HOST METHOD PATH"
	pages map[string]func(w http.ResponseWriter) // "host/path?query" → answer
}

func (s *badServer) handle(key string, f func(w http.ResponseWriter)) { s.pages[key] = f }

func (s *badServer) html(key, body string) {
	s.handle(key, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})
}

func (s *badServer) requested(substr string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.log {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

func (s *badServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := strings.Split(r.Host, ":")[0]
	s.mu.Lock()
	s.log = append(s.log, host+" "+r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		return
	}
	if f := s.pages[host+r.URL.RequestURI()]; f != nil {
		f(w)
		return
	}
	http.NotFound(w, r)
}

// body is a paragraph long enough for a ready article (≥ 50 characters).
const badBody = "为进一步规范政府信息公开工作，提高行政效能，根据有关法律法规和上级部门的工作部署，结合本地实际情况，现将有关事项通知如下，请各单位认真贯彻落实。"

type detailPage struct {
	title, time, attrs, attachments string
}

func (d detailPage) render() string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>页面</title></head><body>\n")
	if d.title != "" {
		fmt.Fprintf(&b, "<h1 class=\"title\">%s</h1>\n", d.title)
	}
	fmt.Fprintf(&b, "<div class=\"info\"><span class=\"time\">%s</span></div>\n", d.time)
	if d.attrs != "" {
		fmt.Fprintf(&b, "<table class=\"attrs\">%s</table>\n", d.attrs)
	}
	fmt.Fprintf(&b, "<div id=\"zoom\"><p>%s</p><p>%s</p></div>\n", badBody, d.title)
	if d.attachments != "" {
		fmt.Fprintf(&b, "<div class=\"fujian\">%s</div>\n", d.attachments)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

type listEntry struct{ href, title, date string }

func listPage(items []listEntry) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body><ul class=\"list\">\n")
	for _, it := range items {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>", it.href, it.title)
		if it.date != "" {
			fmt.Fprintf(&b, "<span class=\"date\">%s</span>", it.date)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul></body></html>\n")
	return b.String()
}

// column serves a template column of three articles at /dir/1.html …
// /dir/3.html; bad replaces the list entry and the detail of one of them.
func (s *badServer) column(dir string, bad map[int]func(*listEntry, *detailPage)) {
	var items []listEntry
	for i := 1; i <= 3; i++ {
		e := listEntry{href: fmt.Sprintf("%d.html", i), title: fmt.Sprintf("%s 第%d号通知", dir, i), date: "2024-11-1" + fmt.Sprint(i)}
		d := detailPage{title: e.title, time: fmt.Sprintf("2024-11-1%d 10:00", i)}
		if f := bad[i]; f != nil {
			f(&e, &d)
		}
		items = append(items, e)
		if d.title != "-" { // "-": the detail is served by a handler of its own
			s.html(fmt.Sprintf("%s/%s/%d.html", badTplHost, dir, i), d.render())
		}
	}
	s.html(badTplHost+"/"+dir+"/", listPage(items))
}

func (s *badServer) gkmlpt() {
	s.html(badGkHost+"/bgk/gkmlpt/index", `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<script type="text/javascript">
window._CONFIG = {
    SID: '9',
    TREE: [{id: 101, name: '通知公告', post_count: 3, jump_url: '', children: []},
           {id: 102, name: '政策文件', post_count: 3, jump_url: '', children: []}]
};
</script></body></html>`)
	// Column 101's API answers an HTML page (a WAF or error page).
	s.html(badGkHost+"/bgk/gkmlpt/api/all/101?page=1&sid=9", "<!DOCTYPE html><html><body><h1>系统维护中</h1></body></html>")
	type art struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
		URL   string `json:"url"`
		Time  int64  `json:"display_publish_time"`
	}
	var arts []art
	for i := 1; i <= 3; i++ {
		path := fmt.Sprintf("/bgk/gkmlpt/content/0/%d/post_%d.html", i, i)
		title := fmt.Sprintf("政策文件第%d号", i)
		arts = append(arts, art{ID: i, Title: title, URL: "http://" + badGkHost + path, Time: 1731290400 + int64(i)*86400})
		s.html(badGkHost+path, fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8">
<meta name="PubDate" content="2024-11-1%d 10:00"></head><body>
<div class="classify"><table class="table-infos"><tr><td>索引号：</td><td>BGK-%d</td><td>发布机构：</td><td>测试局</td></tr></table></div>
<h1 class="title">%s</h1><div id="zoom"><p>%s</p></div></body></html>`, i, i, title, badBody))
	}
	b, _ := json.Marshal(map[string]any{"classify": map[string]any{"id": 102, "name": "政策文件", "post_count": 3}, "articles": arts, "total": 3})
	s.handle(badGkHost+"/bgk/gkmlpt/api/all/102?page=1&sid=9", func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
}

// summaryColumn serves two long articles with an attachment and an image
// each; only a head of each may be read.
func (s *badServer) summaryColumn() {
	s.html(summHost+"/news/", listPage([]listEntry{{"1.html", "新闻一", "2024-11-11"}, {"2.html", "新闻二", "2024-11-12"}}))
	filler := strings.Repeat("<p>"+badBody+"</p>\n", 4000) // about 1 MiB
	for i := 1; i <= 2; i++ {
		s.html(fmt.Sprintf("%s/news/%d.html", summHost, i), fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<h1 class="title">新闻%d</h1><div class="info"><span class="time">2024-11-1%d 09:30</span></div>
<div id="zoom"><p>%s</p><img src="photo%d.jpg"><div class="fujian"><a href="att%d.pdf">附件</a></div>
%s</div></body></html>`, i, i, badBody, i, i, filler))
		s.handle(fmt.Sprintf("%s/news/att%d.pdf", summHost, i), func(w http.ResponseWriter) { w.Write([]byte("%PDF-1.4 never fetched")) })
		s.handle(fmt.Sprintf("%s/news/photo%d.jpg", summHost, i), func(w http.ResponseWriter) { w.Write([]byte("JPEG never fetched")) })
	}
}

const badTemplate = `template:
  list:
    item: "ul.list li"
    link: "a@href"
    title: "a"
    date: "span.date"
    max_pages: 3
  detail:
    title: "h1.title"
    body: "div#zoom"
    publish_time: "div.info span.time"
    attributes: "table.attrs"
    attachments: "div.fujian a"
`

func badTarget(code, entry, extra string) string {
	return fmt.Sprintf(`  - target_code: %s
    target_name: 坏输入｜%s
    entry_url: %s
    dept_binding: external_ref
    channel_name: 通知公告
    content_category: 通知公告
%s`, code, code, entry, extra)
}

// badWorld is the bad-input world: server, config, store, client.
type badWorld struct {
	srv    *badServer
	st     *store.Store
	bundle *config.Bundle
	client *fetch.Client
}

func newBadWorld(t *testing.T) *badWorld {
	t.Helper()
	s := &badServer{pages: map[string]func(http.ResponseWriter){}}
	big := strings.Repeat("x", 10000)
	s.column("ok", nil)
	s.column("nomatch", nil)
	s.html(badTplHost+"/shape/", `<html><body><ul class="list"><li><span onclick="go(1)">改版后的条目一</span></li><li><span onclick="go(2)">改版后的条目二</span></li></ul></body></html>`)
	s.column("notitle", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) { e.title, d.title = `<img src="new.gif">`, "" },
	})
	s.column("listtitle", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) { d.title = "" },
	})
	s.column("baddate", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) { e.date, d.time = "", "二〇二四年某月某日" },
	})
	s.column("badattr", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) {
			d.attrs = "<tr><td>索引号：</td><td>BAD-2</td><td>成文日期：</td><td>即日起</td></tr>"
		},
	})
	s.column("bigatt", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) {
			d.attachments = `<a href="big.pdf">大附件.pdf</a><a href="small.pdf">小附件.pdf</a>`
		},
	})
	s.handle(badTplHost+"/bigatt/big.pdf", func(w http.ResponseWriter) { fmt.Fprint(w, big) })
	s.handle(badTplHost+"/bigatt/small.pdf", func(w http.ResponseWriter) { fmt.Fprint(w, "%PDF-1.4 small") })
	s.column("err500", map[int]func(*listEntry, *detailPage){
		2: func(e *listEntry, d *detailPage) { d.title = "-" },
	})
	s.handle(badTplHost+"/err500/2.html", func(w http.ResponseWriter) { http.Error(w, "internal error", http.StatusInternalServerError) })
	s.gkmlpt()
	s.summaryColumn()
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	addr := strings.TrimPrefix(s.srv.URL, "http://")

	dir := t.TempDir()
	for _, d := range []string{"cms", "sites"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cms, err := os.ReadFile(filepath.Join(configDir, "cms", "gkmlpt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := "http://" + badTplHost
	files := map[string]string{
		"cms/gkmlpt.yaml": string(cms),
		"sites/badtpl.yaml": `site_code: badtpl
site_name: 坏输入模板站
base_url: http://` + badTplHost + `
site_role: county_local
access: full
fetch_strategy: direct
` + badTemplate + "targets:\n" +
			badTarget("bad_nomatch", tpl+"/nomatch/", "    parser_override: {list: {item: \"ul.gone li\"}}\n") +
			badTarget("bad_shape", tpl+"/shape/", "") +
			badTarget("bad_notitle", tpl+"/notitle/", "") +
			badTarget("bad_listtitle", tpl+"/listtitle/", "") +
			badTarget("bad_baddate", tpl+"/baddate/", "") +
			badTarget("bad_badattr", tpl+"/badattr/", "") +
			badTarget("bad_bigatt", tpl+"/bigatt/", "") +
			badTarget("bad_err500", tpl+"/err500/", "") +
			badTarget("bad_ok", tpl+"/ok/", ""),
		"sites/badgk.yaml": `site_code: badgk
site_name: 坏输入目录站
base_url: http://` + badGkHost + `
site_role: county_local
cms_adapter: gkmlpt
access: full
adapter_params:
  sid: "9"
depts:
  - dept_path: bgk
    dept_binding: city_level
    dept_display_name: 测试局
    columns:
      - column_id: "101"
        name: 通知公告
      - column_id: "103"
        name: 已撤销栏目
      - column_id: "102"
        name: 政策文件
`,
		"sites/summ.yaml": `site_code: summ
site_name: 摘要站
base_url: http://` + summHost + `
site_role: province_ref
access: summary
fetch_strategy: direct
` + badTemplate + "targets:\n" + badTarget("summ_news", "http://"+summHost+"/news/", ""),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, problems := config.Load(dir)
	if config.HasErrors(problems) {
		t.Fatalf("test config: %v", config.Errors(problems))
	}
	st := storetest.SQLite(t)
	if _, err := configsync.Sync(context.Background(), st, b); err != nil {
		t.Fatal(err)
	}
	rm, err := fetch.ParseResolveMap(fmt.Sprintf("%s=%s,%s=%s,%s=%s", badTplHost, addr, badGkHost, addr, summHost, addr))
	if err != nil {
		t.Fatal(err)
	}
	c := crawltest.FastClientWith(t, st, b, fetch.ClientOptions{Resolve: rm, Clock: &jumpClock{}}, false)
	return &badWorld{srv: s, st: st, bundle: b, client: c}
}

// run crawls the targets in the order given, one site's after another.
func (w *badWorld) run(t *testing.T, c *crawl.Crawler, codes ...string) map[string]crawl.Result {
	t.Helper()
	ctx := context.Background()
	var targets []model.Target
	for _, code := range codes {
		tg, err := w.st.TargetByCode(ctx, code)
		if err != nil {
			t.Fatalf("target %s: %v", code, err)
		}
		targets = append(targets, *tg)
	}
	out := map[string]crawl.Result{}
	for _, r := range c.Run(ctx, targets) {
		out[r.TargetCode] = r
	}
	return out
}

func byURL(t *testing.T, st *store.Store) map[string]model.Article {
	out := map[string]model.Article{}
	for _, a := range crawltest.AllArticles(t, st) {
		out[a.URL] = a
	}
	return out
}

// TestBadInput feeds the pipeline what real sites serve on a bad day (issue
// 5 "Bad input"): each case proves the article is failed with a reason, or
// the target is reported failed, that nothing else is lost, and that the
// crawl went on with the next item and the next target.
func TestBadInput(t *testing.T) {
	w := newBadWorld(t)
	c := &crawl.Crawler{Store: w.st, Blobs: w.st.Blobs(), Fetch: w.client, Bundle: w.bundle, MaxAttachmentBytes: 4096}
	// The good targets run last in their site, after every bad one.
	results := w.run(t, c, "bad_nomatch", "bad_shape", "bad_notitle", "bad_listtitle", "bad_baddate", "bad_badattr",
		"bad_bigatt", "bad_err500", "bad_ok", "badgk_bgk_101", "badgk_bgk_103", "badgk_bgk_102")
	arts := byURL(t, w.st)
	tpl := func(p string) string { return "http://" + badTplHost + p }
	gk := func(i int) string {
		return fmt.Sprintf("http://%s/bgk/gkmlpt/content/0/%d/post_%d.html", badGkHost, i, i)
	}

	tests := []struct {
		name       string
		target     string
		targetErr  []string          // the target failed, its reason holds these
		ready      []string          // stored with status ready
		failed     map[string]string // stored with status failed, reason holds the value
		notStored  []string          // not stored at all
		problems   []string          // the run's report for the target holds these
		wantFailed int               // Result.Failed
		check      func(t *testing.T, r crawl.Result)
	}{
		{
			name: "list selector matches nothing", target: "bad_nomatch",
			targetErr: []string{`"ul.gone li"`, "matched nothing", tpl("/nomatch/")},
			notStored: []string{tpl("/nomatch/1.html")},
		},
		{
			name: "list page changed shape", target: "bad_shape",
			targetErr: []string{tpl("/shape/"), "matched 2 items", "found no article link", "changed shape"},
		},
		{
			name: "detail with no title", target: "bad_notitle",
			ready:      []string{tpl("/notitle/1.html"), tpl("/notitle/3.html")},
			failed:     map[string]string{tpl("/notitle/2.html"): "no title"},
			problems:   []string{tpl("/notitle/2.html") + ": no title"},
			wantFailed: 1,
		},
		{
			name: "detail with no title takes the list's title", target: "bad_listtitle",
			ready: []string{tpl("/listtitle/1.html"), tpl("/listtitle/2.html"), tpl("/listtitle/3.html")},
			check: func(t *testing.T, r crawl.Result) {
				if got := arts[tpl("/listtitle/2.html")].Title; got != "listtitle 第2号通知" {
					t.Errorf("title %q, want the list's", got)
				}
			},
		},
		{
			name: "publish time that does not parse", target: "bad_baddate",
			ready:      []string{tpl("/baddate/1.html"), tpl("/baddate/3.html")},
			failed:     map[string]string{tpl("/baddate/2.html"): `publish time "二〇二四年某月某日" does not parse`},
			wantFailed: 1,
		},
		{
			name: "attribute date that does not parse", target: "bad_badattr",
			ready: []string{tpl("/badattr/1.html"), tpl("/badattr/2.html"), tpl("/badattr/3.html")},
			check: func(t *testing.T, r crawl.Result) {
				a := arts[tpl("/badattr/2.html")]
				if a.EffectiveDate != "" || a.IndexNo != "BAD-2" {
					t.Errorf("effective_date %q index_no %q, want empty and BAD-2", a.EffectiveDate, a.IndexNo)
				}
				if !strings.Contains(a.StatusReason, `effective_date "即日起" does not parse`) {
					t.Errorf("status_reason %q does not name the bad date", a.StatusReason)
				}
				var meta struct{ Raw map[string]string }
				if err := json.Unmarshal(a.MetadataJSON, &meta); err != nil || meta.Raw["成文日期"] != "即日起" {
					t.Errorf("metadata_json.raw lost the value as printed: %s", a.MetadataJSON)
				}
			},
		},
		{
			name: "attachment over the size limit", target: "bad_bigatt",
			ready:      []string{tpl("/bigatt/1.html"), tpl("/bigatt/3.html")},
			failed:     map[string]string{tpl("/bigatt/2.html"): "attachment " + tpl("/bigatt/big.pdf") + " is larger than the 4096-byte limit"},
			wantFailed: 1,
			problems:   []string{"attachment " + tpl("/bigatt/big.pdf"), "exceeds", "4096"},
			check: func(t *testing.T, r crawl.Result) {
				a := arts[tpl("/bigatt/2.html")]
				sum := sha256.Sum256([]byte("%PDF-1.4 small"))
				if !a.HasAttachment || len(a.Attachments) != 1 || a.Attachments[0].FileHash != hex.EncodeToString(sum[:]) {
					t.Errorf("attachments %+v, want only small.pdf stored with its sha256", a.Attachments)
				}
				if n := len(w.srv.requested(badTplHost + " GET /bigatt/big.pdf")); n != 1 {
					t.Errorf("big.pdf requested %d times, want once", n)
				}
				var meta struct {
					Skipped []string `json:"attachments_skipped"`
				}
				if err := json.Unmarshal(a.MetadataJSON, &meta); err != nil || len(meta.Skipped) != 1 ||
					!strings.Contains(meta.Skipped[0], "big.pdf") || !strings.Contains(meta.Skipped[0], "4096") {
					t.Errorf("metadata_json does not name the skipped attachment: %s", a.MetadataJSON)
				}
			},
		},
		{
			name: "detail answers 500 for one item", target: "bad_err500",
			ready:      []string{tpl("/err500/1.html"), tpl("/err500/3.html")},
			notStored:  []string{tpl("/err500/2.html")},
			problems:   []string{tpl("/err500/2.html"), "HTTP 500"},
			wantFailed: 1,
		},
		{
			name: "good template target after the bad ones", target: "bad_ok",
			ready: []string{tpl("/ok/1.html"), tpl("/ok/2.html"), tpl("/ok/3.html")},
		},
		{
			name: "gkmlpt list API answers HTML", target: "badgk_bgk_101",
			targetErr: []string{"list API page 1", "expected JSON, got an HTML page"},
		},
		{
			name: "gkmlpt column gone from the TREE", target: "badgk_bgk_103",
			targetErr: []string{"column 103", "TREE"},
		},
		{
			name: "good gkmlpt column after the bad ones", target: "badgk_bgk_102",
			ready: []string{gk(1), gk(2), gk(3)},
			check: func(t *testing.T, r crawl.Result) {
				if a := arts[gk(2)]; a.NativePostID != "2" || a.IndexNo != "BGK-2" {
					t.Errorf("native_post_id %q index_no %q, want 2 and BGK-2", a.NativePostID, a.IndexNo)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := results[tt.target]
			if !ok {
				t.Fatalf("no result for %s", tt.target)
			}
			if len(tt.targetErr) > 0 {
				if r.Err == nil {
					t.Fatalf("target %s did not fail", tt.target)
				}
				for _, s := range tt.targetErr {
					if !strings.Contains(r.Err.Error(), s) {
						t.Errorf("target error %q does not say %q", r.Err, s)
					}
				}
			} else if r.Err != nil {
				t.Fatalf("target %s failed: %v", tt.target, r.Err)
			}
			for _, u := range tt.ready {
				a, ok := arts[u]
				switch {
				case !ok:
					t.Errorf("%s not stored", u)
				case a.Status != model.StatusReady:
					t.Errorf("%s is %s (%s), want ready", u, a.Status, a.StatusReason)
				case a.ContentText == "" || a.RawHTMLPath == "":
					t.Errorf("%s stored without its text or raw HTML", u)
				}
			}
			for u, reason := range tt.failed {
				a, ok := arts[u]
				switch {
				case !ok:
					t.Errorf("%s not stored; a failed article is kept with its reason", u)
				case a.Status != model.StatusFailed:
					t.Errorf("%s is %s, want failed", u, a.Status)
				case !strings.Contains(a.StatusReason, reason):
					t.Errorf("%s status_reason %q, want it to say %q", u, a.StatusReason, reason)
				}
			}
			for _, u := range tt.notStored {
				if _, ok := arts[u]; ok {
					t.Errorf("%s stored", u)
				}
			}
			all := strings.Join(r.Problems, "\n")
			for _, p := range tt.problems {
				if !strings.Contains(all, p) {
					t.Errorf("the report does not say %q; problems:\n%s", p, all)
				}
			}
			if r.Failed != tt.wantFailed {
				t.Errorf("Result.Failed = %d, want %d (problems: %v)", r.Failed, tt.wantFailed, r.Problems)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}

	t.Run("the crawl table names every failed target with its reason", func(t *testing.T) {
		var b strings.Builder
		var ordered []crawl.Result
		for _, tt := range tests {
			ordered = append(ordered, results[tt.target])
		}
		crawl.WriteTable(&b, ordered)
		for _, tt := range tests {
			if len(tt.targetErr) > 0 && !strings.Contains(b.String(), "✗ "+tt.target+": ") {
				t.Errorf("the table does not give %s's reason:\n%s", tt.target, b.String())
			}
		}
	})
}

// TestSummaryAccess crawls a summary-access site (DESIGN §1): articles are
// stored without content_text, raw HTML or text files, no attachment or
// image is requested, and each detail read stops at the head cap.
func TestSummaryAccess(t *testing.T) {
	w := newBadWorld(t)
	const head = 4096
	c := &crawl.Crawler{Store: w.st, Blobs: w.st.Blobs(), Fetch: w.client, Bundle: w.bundle, SummaryHeadBytes: head}
	r := w.run(t, c, "summ_news")["summ_news"]
	if r.Err != nil || r.Created != 2 {
		t.Fatalf("crawl: err %v, created %d (problems %v), want 2 articles", r.Err, r.Created, r.Problems)
	}
	arts := byURL(t, w.st)
	for i := 1; i <= 2; i++ {
		u := fmt.Sprintf("http://%s/news/%d.html", summHost, i)
		a, ok := arts[u]
		if !ok {
			t.Errorf("%s not stored", u)
			continue
		}
		if a.Status != model.StatusReady || a.Title != fmt.Sprintf("新闻%d", i) || a.PublishTime == nil {
			t.Errorf("%s: status %s (%s), title %q, publish_time %v", u, a.Status, a.StatusReason, a.Title, a.PublishTime)
		}
		if a.ContentText != "" || a.RawHTMLPath != "" || a.TextPath != "" || a.HasAttachment || len(a.Attachments) > 0 {
			t.Errorf("%s: summary access stored content: text %d chars, raw %q, text file %q, attachments %d",
				u, len(a.ContentText), a.RawHTMLPath, a.TextPath, len(a.Attachments))
		}
		var meta struct {
			HeadRead int `json:"head_read_bytes"`
		}
		if err := json.Unmarshal(a.MetadataJSON, &meta); err != nil || meta.HeadRead == 0 || meta.HeadRead > head {
			t.Errorf("%s: head_read_bytes %d, want 1…%d (metadata %s)", u, meta.HeadRead, head, a.MetadataJSON)
		}
	}
	for _, kind := range []string{".pdf", ".jpg"} {
		if got := w.srv.requested(kind); len(got) > 0 {
			t.Errorf("summary access requested %v", got)
		}
	}
	// The pages are about 1 MiB each; the client read no more than the
	// head off the wire.
	logs, err := w.st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{Host: summHost, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	details := 0
	for _, l := range logs {
		if l.Purpose != model.PurposeDetail {
			continue
		}
		details++
		if l.Bytes > head {
			t.Errorf("detail %s read %d bytes on the wire, want at most the %d-byte head", l.ArticleURL, l.Bytes, head)
		}
	}
	if details != 2 {
		t.Errorf("%d detail requests logged, want 2", details)
	}
}

// TestGkmlptBadAdapterParams: a site whose stored adapter parameters do not
// read as a JSON object (here an array) is refused, naming the site and the adapter, rather
// than crawled as if it had none.
func TestGkmlptBadAdapterParams(t *testing.T) {
	w := newBadWorld(t)
	if _, err := w.st.DB().Exec(`UPDATE crawl_site SET adapter_params_json = '["9"]' WHERE site_code = 'badgk'`); err != nil {
		t.Fatal(err)
	}
	c := &crawl.Crawler{Store: w.st, Blobs: w.st.Blobs(), Fetch: w.client, Bundle: w.bundle}
	r := w.run(t, c, "badgk_bgk_102")["badgk_bgk_102"]
	if r.Err == nil {
		t.Fatalf("a site with unreadable adapter_params crawled: %+v", r)
	}
	for _, want := range []string{"adapter_params", "badgk", "gkmlpt"} {
		if !strings.Contains(r.Err.Error(), want) {
			t.Errorf("error %q does not name %q", r.Err, want)
		}
	}
	if n := len(crawltest.AllArticles(t, w.st)); n != 0 { // nothing stored under the wrong parameters
		t.Errorf("%d articles stored from a site whose parameters do not read", n)
	}
}
