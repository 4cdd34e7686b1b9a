package portal_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// items returns the card titles a list page shows, in order.
var itemTitle = regexp.MustCompile(`<h2><a href="/card/\d+">([^<]*)</a></h2>`)

func items(body string) []string {
	var out []string
	for _, m := range itemTitle.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestCardList(t *testing.T) {
	storetest.ForEachDialect(t, testCardList)
}

func testCardList(t *testing.T, st *store.Store) {
	w := newWorldOn(t, st)
	tests := []struct {
		name     string
		query    url.Values
		want     []string // titles, in order; nil: check count only
		count    int
		contains []string
		lacks    []string
	}{
		{name: "front page: newest first, 20 to a page", count: 20,
			contains: []string{"关于印发清远市促进民营经济发展若干措施的通知", "为进一步促进民营经济发展", "共 31 条信息", "第 1 / 2 页", `href="/?page=2"`}},
		{name: "second page", query: url.Values{"page": {"2"}}, count: 11,
			contains: []string{"清远新闻第00期", `href="/"`}},
		{name: "department", query: url.Values{"dept": {"37"}},
			want: []string{"关于印发清远市促进民营经济发展若干措施的通知", "清远市发展和改革局2025年工作总结",
				"&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;恶意标题", "来源地址异常的通知", "来源地址带主机名的脚本地址"},
			contains: []string{"清远市发展和改革局 · 共 5 条信息"}},
		{name: "channel", query: url.Values{"channel": {"财政信息"}}, want: []string{"清远市2026年第一季度财政收支情况"}},
		{name: "department and channel", query: url.Values{"dept": {"38"}, "channel": {"新闻动态"}, "page": {"2"}}, count: 5,
			contains: []string{`href="/?channel=%E6%96%B0%E9%97%BB%E5%8A%A8%E6%80%81&amp;dept=38"`}},
		{name: "date range, both ends included", query: url.Values{"from": {"2026-02-01"}, "to": {"2026-04-20"}},
			want: []string{"关于印发清远市促进民营经济发展若干措施的通知", "清远市2026年第一季度财政收支情况", "清远市发展和改革局2025年工作总结"}},
		{name: "search in titles", query: url.Values{"q": {"财政收支"}}, want: []string{"清远市2026年第一季度财政收支情况"}},
		{name: "search in green summaries", query: url.Values{"q": {"贯彻执行"}}, want: []string{"关于印发清远市促进民营经济发展若干措施的通知"}},
		{name: "a yellow card's summary is not searched", query: url.Values{"q": {"等待人工改写"}}, want: nil, count: 0,
			contains: []string{"没有找到符合条件的信息"}},
		{name: "search with LIKE wildcards is literal", query: url.Values{"q": {"%"}}, count: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/"
			if len(tt.query) > 0 {
				path += "?" + tt.query.Encode()
			}
			r := w.get(t, path)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d", path, r.status)
			}
			got := items(r.body)
			if tt.want != nil {
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Errorf("GET %s lists\n%q\nwant\n%q", path, got, tt.want)
				}
			} else if len(got) != tt.count {
				t.Errorf("GET %s lists %d cards, want %d: %q", path, len(got), tt.count, got)
			}
			for _, s := range tt.contains {
				if !strings.Contains(r.body, s) {
					t.Errorf("GET %s lacks %q", path, s)
				}
			}
			for _, s := range append(tt.lacks, "黄色摘要", "红色摘要", "已被来源网站要求下线", "（转载）") {
				if strings.Contains(r.body, s) {
					t.Errorf("GET %s shows %q", path, s)
				}
			}
		})
	}
}

func TestCardListRefusesBadFilters(t *testing.T) {
	w := newWorld(t)
	for path, want := range map[string]string{
		"/?from=2026-13-01":     "起始日期格式不正确",
		"/?to=yesterday":        "截止日期格式不正确",
		"/?dept=qyfgw":          "部门参数无效",
		"/?dept=-3&q=%E9%80%9A": "部门参数无效",
		// A NUL once cut the search short and every card matched.
		"/?q=%00zzzz":        "含有控制字符",
		"/?q=%E9%80%9A%1b":   "含有控制字符",
		"/?channel=a%c2%80b": "含有控制字符",
		"/?q=%ff":            "含有控制字符",
	} {
		r := w.get(t, path)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d, page lacks %q", path, r.status, want)
		}
		if len(items(r.body)) != 0 {
			t.Errorf("GET %s lists cards despite the bad filter", path)
		}
	}
}

func TestCardPage(t *testing.T) {
	w := newWorld(t)
	r := w.get(t, w.cardPath("green"))
	if r.status != http.StatusOK {
		t.Fatalf("green card: %d", r.status)
	}
	for _, s := range []string{"关于印发清远市促进民营经济发展若干措施的通知", "为进一步促进民营经济发展，现将若干措施印发给你们",
		"清远市人民政府", "www.gdqy.gov.test", "2026年4月20日", "清远市发展和改革局", "政策文件",
		fmt.Sprintf(`<a class="button" href="/go/%d" rel="nofollow">阅读全文（前往来源网站）</a>`, w.cards["green"]),
		fmt.Sprintf("sha256:%064x", 7000)} {
		if !strings.Contains(r.body, s) {
			t.Errorf("green card page lacks %q", s)
		}
	}
	if strings.Contains(r.body, `href="https://www.gdqy.gov.test`) {
		t.Error("the card page links the source directly; the door must be the only way")
	}
	for label, hidden := range map[string]string{"yellow": "黄色摘要", "red": "红色摘要"} {
		r := w.get(t, w.cardPath(label))
		if r.status != http.StatusOK {
			t.Fatalf("%s card: %d", label, r.status)
		}
		if strings.Contains(r.body, hidden) {
			t.Errorf("the %s card page shows its summary", label)
		}
		if !strings.Contains(r.body, "本条信息仅提供标题和来源链接") || !strings.Contains(r.body, w.goPath(label)) {
			t.Errorf("the %s card page lacks the title-and-link note or its door", label)
		}
	}
}

// TestHiddenCardsAbsentEverywhere: a frozen card and a duplicate are not
// listed, not found, not searchable, and their doors are shut.
func TestHiddenCardsAbsentEverywhere(t *testing.T) {
	storetest.ForEachDialect(t, testHiddenCardsAbsentEverywhere)
}

func testHiddenCardsAbsentEverywhere(t *testing.T, st *store.Store) {
	w := newWorldOn(t, st)
	for _, label := range []string{"frozen", "dup"} {
		for _, path := range []string{w.cardPath(label), w.goPath(label)} {
			r := w.get(t, path)
			if r.status != http.StatusNotFound || !strings.Contains(r.body, "该信息不存在或已下线") {
				t.Errorf("GET %s (%s): %d %q", path, label, r.status, r.header.Get("Location"))
			}
		}
	}
	for _, path := range []string{"/", "/?q=" + url.QueryEscape("下线"), "/?q=" + url.QueryEscape("转载"),
		"/?dept=37", "/?channel=" + url.QueryEscape("政策文件"), "/?from=2026-04-21&to=2026-04-21"} {
		r := w.get(t, path)
		for _, s := range []string{"已被来源网站要求下线的通知", "（转载）", w.cardPath("frozen") + `"`, w.cardPath("dup") + `"`} {
			if strings.Contains(r.body, s) {
				t.Errorf("GET %s shows %q", path, s)
			}
		}
	}
	// The filter counts leave them out too: 政策文件 has green, red,
	// hostile, badurl and badurl2 left.
	r := w.get(t, "/")
	if !strings.Contains(r.body, "政策文件（5）") {
		t.Errorf("the channel filter does not count 5 public 政策文件 cards")
	}
}

func TestDoor(t *testing.T) {
	w := newWorld(t)
	r := w.get(t, w.goPath("green"))
	if r.status != http.StatusFound || r.header.Get("Location") != "https://www.gdqy.gov.test/zcwj/post_1000.html" {
		t.Fatalf("door: %d to %q, want 302 to the source", r.status, r.header.Get("Location"))
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("door Cache-Control %q: a cached redirect would not be counted", r.header.Get("Cache-Control"))
	}
	// A HEAD is answered but is not a click-through.
	if h := w.do(t, http.MethodHead, w.goPath("green"), browserUA, nil); h.status != http.StatusFound {
		t.Errorf("HEAD door: %d", h.status)
	}
	vs := w.visitors(t)
	if len(vs) != 1 || vs[0].Clicks != 1 || vs[0].Requests != 2 {
		t.Fatalf("after one click-through and one HEAD: %s", dump(vs))
	}
	stats, err := w.st.PortalDayStats(context.Background(), w.today())
	if err != nil {
		t.Fatal(err)
	}
	var clicks int64
	for _, b := range stats.Bands {
		clicks += b.Clicks
	}
	if clicks != 1 {
		t.Errorf("day stats count %d click-throughs, want 1: %+v", clicks, stats)
	}
	// A stored source that is not a web address is never a redirect.
	for _, label := range []string{"badurl", "badurl2"} {
		if r := w.get(t, w.goPath(label)); r.status != http.StatusNotFound || r.header.Get("Location") != "" {
			t.Errorf("door of a javascript: source (%s): %d to %q", label, r.status, r.header.Get("Location"))
		}
	}
	for _, path := range []string{"/go/999999", "/go/abc", "/go/-1"} {
		if r := w.get(t, path); r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.status)
		}
	}
}

func TestRobotsTxt(t *testing.T) {
	w := newWorld(t)
	r := w.get(t, "/robots.txt")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("robots.txt: %d %s", r.status, r.header.Get("Content-Type"))
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(r.body, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range []string{"User-agent: *", "Allow: /card/", "Disallow: /go/", "Disallow: /api/",
		"Disallow: /admin/", "Disallow: /v1/"} {
		if !lines[want] {
			t.Errorf("robots.txt lacks %q:\n%s", want, r.body)
		}
	}
	for _, bad := range []string{"Disallow: /", "Disallow: /card/", "Disallow: /card"} {
		if lines[bad] {
			t.Errorf("robots.txt has %q: card pages must stay open", bad)
		}
	}
}

// TestEveryResponseIsPrivate: no portal answer sets a cookie, every one
// carries the strict content policy, and no page refers to another site.
func TestEveryResponseIsPrivate(t *testing.T) {
	w := newWorld(t)
	external := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*"(https?:)?//`)
	paths := []struct{ method, path, body string }{
		{"GET", "/", ""}, {"GET", "/?q=" + url.QueryEscape("通知") + "&page=1", ""}, {"GET", "/?from=bad", ""},
		{"GET", w.cardPath("green"), ""}, {"GET", w.cardPath("red"), ""}, {"GET", w.cardPath("frozen"), ""},
		{"GET", w.goPath("green"), ""}, {"GET", w.goPath("dup"), ""}, {"GET", "/robots.txt", ""},
		{"GET", "/static/portal.css", ""}, {"GET", "/static/portal.js", ""}, {"GET", "/static/logo.svg", ""},
		{"GET", "/static/missing.png", ""}, {"GET", "/static/", ""}, {"GET", "/no/such/page", ""}, {"POST", "/", ""},
		{"POST", "/beacon", `{"scroll":1}`}, {"POST", "/beacon", `not json`},
	}
	for _, p := range paths {
		r := w.do(t, p.method, p.path, browserUA, strings.NewReader(p.body))
		if c := r.header.Values("Set-Cookie"); len(c) > 0 {
			t.Errorf("%s %s sets a cookie: %q", p.method, p.path, c)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self';") ||
			strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
			t.Errorf("%s %s: Content-Security-Policy %q", p.method, p.path, csp)
		}
		if m := external.FindString(r.body); m != "" {
			t.Errorf("%s %s refers to another site: %s", p.method, p.path, m)
		}
	}
	if r := w.get(t, "/static/"); r.status != http.StatusNotFound || strings.Contains(r.body, `href="portal.css"`) {
		t.Errorf("GET /static/ lists the files: %d", r.status)
	}
	if r := w.get(t, "/"); !strings.Contains(r.body, `<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">`) {
		t.Errorf("the front page links no favicon")
	}
	if r := w.get(t, "/static/favicon.svg"); r.status != http.StatusOK || !strings.Contains(r.body, "<svg") {
		t.Errorf("favicon.svg: status %d", r.status)
	}
	for _, path := range []string{"/static/%c0", "/static/%ff%fe.css"} {
		if r := w.get(t, path); r.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, r.status)
		}
	}
	js := w.get(t, "/static/portal.js").body
	for _, bad := range []string{"cookie", "localStorage", "sessionStorage", "http:", "https:", "navigator.userAgent", "clientX"} {
		if strings.Contains(js, bad) {
			t.Errorf("the page script mentions %q", bad)
		}
	}
}

// TestHostileCardText: text stored on a card is shown, never run.
func TestHostileCardText(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/", w.cardPath("hostile"), "/?q=" + url.QueryEscape("恶意")} {
		r := w.get(t, path)
		if strings.Contains(r.body, `<script>alert`) || strings.Contains(r.body, `<img src=x`) {
			t.Errorf("GET %s carries the card's markup unescaped", path)
		}
		if !strings.Contains(r.body, "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;恶意标题") {
			t.Errorf("GET %s does not show the hostile title as text", path)
		}
	}
	if r := w.get(t, w.cardPath("hostile")); !strings.Contains(r.body, "&lt;img src=x onerror=alert(&#34;s&#34;)&gt;恶意摘要") {
		t.Error("the card page does not show the hostile summary as text")
	}
}

// TestBeacon: the script's counts are added to the visitor; a post from
// another site and a malformed body are refused.
func TestBeacon(t *testing.T) {
	w := newWorld(t)
	post := func(body string, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, w.srv.URL+"/beacon", strings.NewReader(body))
		req.Header.Set("User-Agent", browserUA)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	token := pageToken(t, w.get(t, "/"))
	if s := post(`{"scroll":3,"pointer":5,"key":1,"click":2,"visibility":1,"token":"`+token+`"}`, map[string]string{"Sec-Fetch-Site": "same-origin",
		"Origin": w.srv.URL}); s != http.StatusNoContent {
		t.Fatalf("beacon: %d", s)
	}
	if s := post(`{"scroll":500}`, map[string]string{"Sec-Fetch-Site": "cross-site"}); s != http.StatusForbidden {
		t.Errorf("cross-site beacon: %d, want 403", s)
	}
	if s := post(`{"scroll":500}`, map[string]string{"Origin": "https://evil.example"}); s != http.StatusForbidden {
		t.Errorf("beacon from another origin: %d, want 403", s)
	}
	if s := post(`{"scroll":`+strings.Repeat("1", 2000)+`}`, nil); s != http.StatusBadRequest {
		t.Errorf("oversized beacon: %d, want 400", s)
	}
	if s := post(`{"pointer":99999999,"token":"`+token+`"}`, nil); s != http.StatusNoContent {
		t.Errorf("beacon with a huge count: %d", s)
	}
	vs := w.visitors(t)
	if len(vs) != 1 {
		t.Fatalf("visitors: %s", dump(vs))
	}
	want := store.VisitorEvents{Scroll: 3, Pointer: 5 + 10000, Key: 1, Click: 2, Visibility: 1}
	if vs[0].Events != want {
		t.Errorf("events %+v, want %+v (a batch counts at most 10000 of a type)", vs[0].Events, want)
	}
}
