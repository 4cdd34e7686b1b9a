package adapter

import (
	"net/url"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/extract"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseJSObject(t *testing.T) {
	src := `{SID: '4a1b', // session
		TREE: [{id: 2849, name: '规划计划 ', post_count: 12, children: [
			{id: "2850", name: "子栏目", children: [], jump_url: 'http://x/y',},
		]}, /* trailing */ ], "q\"k": 'it\'s', n: -1.5e3, ok: true, none: null}; var x = 1;`
	v, end, err := ParseJSObject(src)
	if err != nil {
		t.Fatal(err)
	}
	if rest := strings.TrimSpace(src[end:]); !strings.HasPrefix(rest, "; var x") {
		t.Errorf("parse stopped at %q", rest)
	}
	m := v.(map[string]any)
	if m["SID"] != "4a1b" || m[`q"k`] != "it's" || m["n"] != "-1.5e3" || m["ok"] != true || m["none"] != nil {
		t.Errorf("got %#v", m)
	}
	for _, bad := range []string{`{a: }`, `{a: 'x}`, `[1, 2`, strings.Repeat("[", 100) + strings.Repeat("]", 100), `{a b}`} {
		if _, _, err := ParseJSObject(bad); err == nil {
			t.Errorf("ParseJSObject(%q) accepted", bad)
		}
	}
}

func TestParseGkmlptIndex(t *testing.T) {
	html := `<html><script>var a = 1; window._CONFIG = {
		SID: '763042', DEPT: 'qyfgw',
		TREE: [{id: 1, name: '政策文件', post_count: 20, children: [
			{id: 2849, name: '规划计划 ', post_count: 12, children: []},
			{id: 2850, name: '规章文件', post_count: 8}]},
		       {id: 3001, name: '通知公告', post_count: 5, children: []}]};</script></html>`
	idx, err := ParseGkmlptIndex([]byte(html), "window._CONFIG")
	if err != nil {
		t.Fatal(err)
	}
	if idx.SID != "763042" || len(idx.Columns) != 4 {
		t.Fatalf("got %+v", idx)
	}
	c := idx.Columns[1]
	if c.ID != "2849" || c.Name != "规划计划" || c.Path != "政策文件｜规划计划" || c.PostCount != 12 || c.ParentID != "1" {
		t.Errorf("column = %+v", c)
	}
	if _, err := ParseGkmlptIndex([]byte(`<html>no config</html>`), ""); err == nil {
		t.Error("page without _CONFIG accepted")
	}
}

var gkmlptList = config.AdapterList{
	ItemsPath: "articles", TotalPath: "total", ClassifyPath: "classify",
	Fields: map[string]string{
		"native_post_id": "id", "title": "title", "url": "url", "doc_no": "document_number",
		"index_no": "identifier", "publisher": "publisher", "publish_time": "display_publish_time",
		"attachments": "attachment", "abolished": "is_abolished",
	},
}

func TestParseGkmlptList(t *testing.T) {
	body := `{"classify":{"id":2849,"name":"规划计划 ","post_count":2},"total":2,"articles":[
		{"id":1234567890123,"title":"关于印发 规划的通知","url":"/qyfgw/gkmlpt/content/1/1234/post_1234567890123.html",
		 "document_number":"清发改〔2025〕3号","identifier":"X/2025-001","publisher":"清远市发展和改革局",
		 "display_publish_time":1709602215,"is_abolished":false,
		 "attachment":[{"id":9,"name":"方案.pdf","size":1024,"url":"http://www.qingyuan.gov.test/attach/9.pdf"}]},
		{"id":2,"title":"无链接"}]}`
	page, cls, err := ParseGkmlptList([]byte(body), mustURL(t, "http://www.qingyuan.gov.test/qyfgw/gkmlpt/api/all/2849?page=1&sid=1"), gkmlptList)
	if err != nil {
		t.Fatal(err)
	}
	if cls.Name != "规划计划" || cls.PostCount != 2 || page.Total != 2 {
		t.Errorf("classify = %+v total = %d", cls, page.Total)
	}
	if len(page.Items) != 1 {
		t.Fatalf("items = %+v", page.Items)
	}
	it := page.Items[0]
	if it.NativePostID != "1234567890123" || it.URL != "http://www.qingyuan.gov.test/qyfgw/gkmlpt/content/1/1234/post_1234567890123.html" ||
		it.Fields["doc_no"] != "清发改〔2025〕3号" || it.Date != "1709602215" {
		t.Errorf("item = %+v", it)
	}
	if len(it.Attachments) != 1 || it.Attachments[0].Ext != "pdf" || it.Attachments[0].Size != 1024 {
		t.Errorf("attachments = %+v", it.Attachments)
	}
	for name, bad := range map[string]string{
		"html instead of json": `<html><body>412</body></html>`,
		"api error":            `{"error":"invalid sid"}`,
		"not an array":         `{"articles":{}}`,
	} {
		if _, _, err := ParseGkmlptList([]byte(bad), nil, gkmlptList); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTemplateListAndPaging(t *testing.T) {
	html := `<ul class="list"><li><a href="content/post_1.html">标题一</a><span class="date">2025-03-05</span></li>
		<li><a href="/abs/post_2.html">标题二</a><span class="date">2025-03-04</span></li>
		<li><a href="javascript:void(0)">坏链接</a></li></ul><a class="next" href="index_1.html">下一页</a>`
	page, err := ParseList([]byte(html), mustURL(t, "http://www.gd.gov.test/zwgk/zcwj/index.html"), config.ListTemplate{
		Item: "ul.list li", Link: "a@href", Title: "a", Date: "span.date", NextPage: "a.next@href",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[0].URL != "http://www.gd.gov.test/zwgk/zcwj/content/post_1.html" ||
		page.Items[1].URL != "http://www.gd.gov.test/abs/post_2.html" || page.Items[0].Title != "标题一" || page.Items[1].Date != "2025-03-04" {
		t.Errorf("items = %+v", page.Items)
	}
	if page.Next != "http://www.gd.gov.test/zwgk/zcwj/index_1.html" {
		t.Errorf("next = %q", page.Next)
	}
	entry := mustURL(t, "http://www.lianzhou.gov.test/tzgg/index.html")
	lt := config.ListTemplate{PageURL: "index_{n}.html"}
	if u, ok := PageURL(entry, lt, 0); !ok || u != entry.String() {
		t.Errorf("page 0 = %q", u)
	}
	if u, ok := PageURL(entry, lt, 2); !ok || u != "http://www.lianzhou.gov.test/tzgg/index_2.html" {
		t.Errorf("page 2 = %q", u)
	}
	feed := `{"data":{"list":[{"url":"/a/1.html","title":"甲","pubDate":"2025/3/5"}],"next":"feed_1.json"}}`
	fp, err := ParseList([]byte(feed), mustURL(t, "http://www.gov.test/zcwj/feed.json"), config.ListTemplate{
		Format: config.ListJSON, Items: "data.list", Link: "url", Title: "title", Date: "pubDate", NextPage: "data.next",
	})
	if err != nil || len(fp.Items) != 1 || fp.Items[0].URL != "http://www.gov.test/a/1.html" || fp.Next != "http://www.gov.test/zcwj/feed_1.json" {
		t.Errorf("feed = %+v, %v", fp, err)
	}
}

func TestParseDetail(t *testing.T) {
	html := `<html><head><meta name="PubDate" content="2025-03-05 10:20"></head><body>
		<h1>关于印发某方案的通知</h1><span class="source">来源：清远市发展和改革局</span>
		<table class="attrs"><tr><td>索引号：</td><td>X/2025-001</td><td>文号：</td><td>清发改〔2025〕3号</td></tr></table>
		<div class="content"><p>正文第一段。</p><div class="share">分享到</div><p><a href="/f/fa.pdf">方案.pdf</a></p></div></body></html>`
	d, err := ParseDetail([]byte(html), mustURL(t, "http://www.gd.gov.test/zwgk/post_1.html"), config.DetailTemplate{
		Title: "h1", Body: "div.content", PublishTime: "meta[name=PubDate]@content", Source: "span.source",
		Attributes: "table.attrs", Attachments: "div.content a[href$='.pdf']", Remove: []string{"div.share"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "关于印发某方案的通知" || strings.Contains(d.Text, "分享") || !strings.Contains(d.Text, "正文第一段") {
		t.Errorf("detail = %+v", d)
	}
	if d.PublishTime == nil || d.PublishTime.Format("2006-01-02 15:04") != "2025-03-05 02:20" {
		t.Errorf("publish time = %v", d.PublishTime)
	}
	if d.Attributes.Canonical[extract.FieldDocNo] != "清发改〔2025〕3号" || len(d.Attachments) != 1 || d.Attachments[0].URL != "http://www.gd.gov.test/f/fa.pdf" {
		t.Errorf("attrs = %v attachments = %+v", d.Attributes.Canonical, d.Attachments)
	}
	d2, _ := ParseDetail([]byte(`<html><body><p>nothing</p></body></html>`), mustURL(t, "http://x.test/"), config.DetailTemplate{Title: "h1", Body: "div.content"})
	if strings.Join(d2.Missing, ",") != "title,body" {
		t.Errorf("missing = %v", d2.Missing)
	}
}

func TestListPageCount(t *testing.T) {
	for name, c := range map[string]struct {
		html string
		want int
	}{
		"TRS script":       {`<ul class="list"><li><a href="a.html">甲</a></li></ul><script>createPageHTML(3, 0, "index", "html");</script>`, 3},
		"TRS quoted":       {`<ul class="list"><li><a href="a.html">甲</a></li></ul><script>createPageHTML('12', 1, "index", "shtml")</script>`, 12},
		"共N页":              {`<ul class="list"><li><a href="a.html">甲</a></li></ul><span>第1页/共 4 页</span>`, 4},
		"nothing says":     {`<ul class="list"><li><a href="a.html">甲</a></li></ul>`, 0},
		"absurd is unsaid": {`<ul class="list"><li><a href="a.html">甲</a></li></ul><script>createPageHTML(0, 0)</script>`, 0},
	} {
		p, err := ParseList([]byte(c.html), mustURL(t, "http://www.lianzhou.gov.test/tzgg/index.html"), config.ListTemplate{Item: "ul.list li"})
		if err != nil || p.PageCount != c.want {
			t.Errorf("%s: page count %d, %v; want %d", name, p.PageCount, err, c.want)
		}
	}
}
