package extract

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

func doc(t *testing.T, html string) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseAttributesShapes(t *testing.T) {
	want := map[string]string{
		FieldIndexNo:       "11441800007186224X/2025-00123",
		FieldDocNo:         "清府〔2025〕12号",
		FieldPublisher:     "清远市人民政府",
		FieldEffectiveDate: "2025年3月4日",
		FieldPublishDate:   "2025-03-05",
		FieldTopicWords:    "规划 发展",
		FieldOpenCategory:  "综合政务",
	}
	cases := []struct {
		name, html string
		raw        map[string]string // extra raw labels expected
	}{
		{"table two pairs per row", `<table class=a>
			<tr><td>索引号：</td><td>11441800007186224X/2025-00123</td><td>分类：</td><td>综合政务</td></tr>
			<tr><td>发布机构：</td><td>清远市人民政府</td><td>成文日期：</td><td>2025年3月4日</td></tr>
			<tr><td>名　　称：</td><td>关于印发某方案的通知</td></tr>
			<tr><td>文号：</td><td>清府〔2025〕12号</td><td>发布日期：</td><td>2025-03-05</td></tr>
			<tr><td>主题词：</td><td>规划 发展</td></tr></table>`, map[string]string{"名称": "关于印发某方案的通知"}},
		{"label variants in th/td with full-width spaces", `<table class=a>
			<tr><th>信息索引</th><td>11441800007186224X/2025-00123</td></tr>
			<tr><th>发文字号</th><td>清府〔2025〕12号</td></tr>
			<tr><th>发文机关</th><td>清远市人民政府</td></tr>
			<tr><th>生成日期</th><td>2025年3月4日</td></tr>
			<tr><th>发布时间</th><td>2025-03-05</td></tr>
			<tr><th>主　题　词</th><td>规划　发展</td></tr>
			<tr><th>主题分类</th><td>综合政务</td></tr>
			<tr><th>标　　题</th><td>关于印发某方案的通知</td></tr></table>`, map[string]string{"标题": "关于印发某方案的通知"}},
		{"dl dt dd", `<dl class=a>
			<dt>索引号:</dt><dd>11441800007186224X/2025-00123</dd>
			<dt>文号:</dt><dd>清府〔2025〕12号</dd><dt>发布机构:</dt><dd>清远市人民政府</dd>
			<dt>成文日期:</dt><dd>2025年3月4日</dd><dt>发布日期:</dt><dd>2025-03-05</dd>
			<dt>关键词:</dt><dd>规划 发展</dd><dt>信息类别:</dt><dd>综合政务</dd>
			<dt>有效性:</dt><dd>有效</dd></dl>`, map[string]string{"有效性": "有效"}},
		{"li label：value", `<ul class=a>
			<li>索引号：11441800007186224X/2025-00123</li><li>文号：清府〔2025〕12号</li>
			<li>发布单位：清远市人民政府</li><li>发文日期：2025年3月4日</li><li>发布日期：2025-03-05</li>
			<li>主题词：规划 发展</li><li>公开分类：综合政务</li><li>实施日期：2025-04-01</li></ul>`,
			map[string]string{"实施日期": "2025-04-01"}},
		{"label value divs", `<div class=a>
			<div><span>索引号</span><span>11441800007186224X/2025-00123</span></div>
			<div><span>文号</span><span>清府〔2025〕12号</span></div>
			<div><span>发布机构</span><span>清远市人民政府</span></div>
			<div><span>成文日期</span><span>2025年3月4日</span></div>
			<div><span>发布日期</span><span>2025-03-05</span></div>
			<div><span>主题词</span><span>规划 发展</span></div>
			<div><span>分类</span><span>综合政务</span></div></div>`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := ParseAttributes(doc(t, c.html).Find(".a"))
			for f, v := range want {
				if a.Canonical[f] != v {
					t.Errorf("%s = %q, want %q (raw %v)", f, a.Canonical[f], v, a.Raw)
				}
			}
			for l, v := range c.raw {
				if a.Raw[l] != v {
					t.Errorf("raw[%s] = %q, want %q", l, a.Raw[l], v)
				}
			}
		})
	}
}

func TestNormalizeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"标\u3000\u3000题：": "标题", " 索 引 号: ": "索引号", "发布日期：：": "发布日期", "文号": "文号",
	} {
		if got := NormalizeLabel(in); got != want {
			t.Errorf("NormalizeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDate(t *testing.T) {
	cases := []struct {
		in      string
		want    string // RFC3339 UTC
		hasTime bool
		bad     bool
	}{
		{in: "2024-03-05", want: "2024-03-04T16:00:00Z"},
		{in: "2024/3/5", want: "2024-03-04T16:00:00Z"},
		{in: "2024年3月5日", want: "2024-03-04T16:00:00Z"},
		{in: "发布日期：2024年03月05日 09:30", want: "2024-03-05T01:30:00Z", hasTime: true},
		{in: "2024-03-05 09:30:15", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "2024-03-05T09:30:15+08:00", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "2024-03-05T01:30:15Z", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "2024.3.5", want: "2024-03-04T16:00:00Z"},
		{in: "20240305", want: "2024-03-04T16:00:00Z"},
		{in: "2025-03-05-10:23:00", want: "2025-03-05T02:23:00Z", hasTime: true}, // gov.cn firstpublishedtime
		{in: "2025-03-05 - 10:23", want: "2025-03-05T02:23:00Z", hasTime: true},
		{in: "2024-03-05T09:30:15.250+08:00", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "2024-03-05 -0800", want: "2024-03-04T16:00:00Z"}, // no time: no zone either
		{in: "2024-03-05T09:30:15+23:00", bad: true},
		{in: "1709602215", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "1709602215000", want: "2024-03-05T01:30:15Z", hasTime: true},
		{in: "2024年2月30日", bad: true},
		{in: "2024-13-01", bad: true},
		{in: "昨天", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, hasTime, err := ParseDate(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseDate(%q) = %v, want an error", c.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Format(time.RFC3339) != c.want || hasTime != c.hasTime {
				t.Errorf("ParseDate(%q) = %s, %v; want %s, %v", c.in, got.Format(time.RFC3339), hasTime, c.want, c.hasTime)
			}
		})
	}
	if d, _ := DateOnly("2024年3月5日"); d != "2024-03-05" {
		t.Errorf("DateOnly = %q", d)
	}
}

func TestNormalizeURL(t *testing.T) {
	cases := map[string]string{
		"HTTP://WWW.Gd.Gov.Test:80/zwgk/./a/../b.html#top": "http://www.gd.gov.test/zwgk/b.html",
		"https://www.gd.gov.test:443":                      "https://www.gd.gov.test/",
		"http://www.gd.gov.test/a?b=2&a=1&utm_source=x":    "http://www.gd.gov.test/a?b=2&a=1",
		"http://www.gd.gov.test/%7euser/%e4%b8%ad":         "http://www.gd.gov.test/~user/%E4%B8%AD",
		"http://www.gd.gov.test/中文/文件.html":                "http://www.gd.gov.test/%E4%B8%AD%E6%96%87/%E6%96%87%E4%BB%B6.html",
		"http://www.gd.gov.test:8080/dir/":                 "http://www.gd.gov.test:8080/dir/",
		"http://www.gd.gov.test/api?page=1&sid=2&page=0":   "http://www.gd.gov.test/api?page=1&sid=2&page=0",
		"http://user:pw@www.gd.gov.test/x":                 "http://www.gd.gov.test/x",
		"http://www.gd.gov.test/a?":                        "http://www.gd.gov.test/a",
		// Reserved characters mean what they say: nothing a server could
		// read differently is rewritten.
		"http://www.gd.gov.test/a%2Fb/c":      "http://www.gd.gov.test/a%2Fb/c",
		"http://www.gd.gov.test/a%2fb":        "http://www.gd.gov.test/a%2Fb",
		"http://www.gd.gov.test//double//x":   "http://www.gd.gov.test//double//x",
		"http://www.gd.gov.test/s?flag":       "http://www.gd.gov.test/s?flag",
		"http://www.gd.gov.test/s?q=a%26b&x=": "http://www.gd.gov.test/s?q=a%26b&x=",
		"http://www.gd.gov.test/a/b/..":       "http://www.gd.gov.test/a/",
		"http://www.gd.gov.test/../../x":      "http://www.gd.gov.test/x",
	}
	for in, want := range cases {
		got, err := NormalizeURL(in)
		if err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
		// Normalizing twice changes nothing.
		if again, _ := NormalizeURL(got); again != got {
			t.Errorf("NormalizeURL not idempotent on %q: %q", got, again)
		}
	}
	for _, bad := range []string{"ftp://x/y", "/relative/path", "http://", "javascript:alert(1)"} {
		if _, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) accepted", bad)
		}
	}
	_, h1, _ := URLHash("http://www.gd.gov.test/a#x")
	_, h2, _ := URLHash("HTTP://www.gd.gov.test:80/a")
	if h1 != h2 || len(h1) != 64 {
		t.Errorf("hashes differ or bad length: %s %s", h1, h2)
	}
}

func TestSelectorAndBodyText(t *testing.T) {
	d := doc(t, `<div class=c><p>第一段　文字。</p><p>第二段<br>换行</p><script>x=1</script>
		<table><tr><td>甲</td><td>乙</td></tr></table><a href="/f.pdf">附件</a></div>`)
	text := BodyText(d.Find(".c"))
	wantLines := []string{"第一段 文字。", "第二段", "换行", "甲 乙", "附件"}
	if got := strings.Split(text, "\n"); strings.Join(got, "|") != strings.Join(wantLines, "|") {
		t.Errorf("BodyText = %q", text)
	}
	s, err := ParseSelector("div.c a@href")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Value(d.Selection); !ok || v != "/f.pdf" {
		t.Errorf("Value = %q %v", v, ok)
	}
	s2, _ := ParseSelector("a[href$='.pdf']")
	if v, _ := s2.Value(d.Selection); v != "附件" {
		t.Errorf("text selector = %q", v)
	}
	if _, err := ParseSelector("div[["); err == nil {
		t.Error("bad selector compiled")
	}
}
