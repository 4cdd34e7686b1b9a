package extract

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

const govPage = `<!doctype html><html><head><title>关于印发清远市数字政府建设方案的通知 - 清远市人民政府</title>
<meta name="PubDate" content="2025-03-05 10:20">
</head><body><div class="nav"><a href="/">首页</a> &gt; <a href="/zwgk/">政务公开</a></div>
<table class="xxgk"><tr><td>索引号：</td><td>11441800007186224X/2025-00123</td><td>分类：</td><td>综合政务</td></tr>
<tr><td>发文机关：</td><td>清远市人民政府</td><td>成文日期：</td><td>2025年03月04日</td></tr>
<tr><td>文　　号：</td><td>清府〔2025〕12号</td><td>发布日期：</td><td>2025年03月05日</td></tr></table>
<h1>关于印发清远市数字政府建设方案的通知</h1>
<div class="article"><p>各县（市、区）人民政府，市政府各部门、各直属机构：</p>
<p>现将《清远市数字政府建设方案》印发给你们，请认真组织实施。实施过程中遇到的问题，请径向市政务服务数据管理局反映。</p>
<p>一、总体要求。坚持以人民为中心，统筹推进数字政府建设，提升政务服务效能，推动治理体系和治理能力现代化，为全市高质量发展提供有力支撑。</p>
<p>二、主要任务。建设统一的政务云平台和数据共享交换体系，推进政务服务一网通办、省内通办、跨省通办，持续优化营商环境。</p>
<p><a href="/attach/fangan.pdf">附件：清远市数字政府建设方案.pdf</a></p></div>
<div class="footer">主办单位：清远市人民政府办公室</div></body></html>`

func TestGeneric(t *testing.T) {
	u, _ := url.Parse("http://www.qingyuan.gov.test/zwgk/content/post_1.html")
	p, err := Generic([]byte(govPage), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "关于印发清远市数字政府建设方案的通知" {
		t.Errorf("title = %q", p.Title)
	}
	if p.PublishTime == nil || p.PublishTime.Format("2006-01-02T15:04") != "2025-03-05T02:20" {
		t.Errorf("publish time = %v", p.PublishTime)
	}
	if !strings.Contains(p.Text, "建设统一的政务云平台") || strings.Contains(p.Text, "主办单位") {
		t.Errorf("text = %q", p.Text)
	}
	if p.Canonical[FieldDocNo] != "清府〔2025〕12号" || p.Canonical[FieldPublisher] != "清远市人民政府" {
		t.Errorf("canonical = %v", p.Canonical)
	}
	found := false
	for _, l := range p.Links {
		if l == "http://www.qingyuan.gov.test/attach/fangan.pdf" {
			found = true
		}
	}
	if !found {
		t.Errorf("links = %v", p.Links)
	}
}

func TestPickTitle(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		extracted string
		want      string
	}{
		{"h1 under a decorated title", `<h1>关于印发方案的通知</h1>`, "关于印发方案的通知 - 清远市人民政府", "关于印发方案的通知"},
		{"h3 headline, underscore decoration", `<div class="zw-title"><h3>广东省推进数字政府改革建设若干措施</h3></div>`,
			"广东省推进数字政府改革建设若干措施_广东省人民政府门户网站", "广东省推进数字政府改革建设若干措施"},
		{"heading that is only a prefix of the headline", `<h2>关于印发</h2>`, "关于印发方案的通知", "关于印发方案的通知"},
		{"em dash inside the headline is kept", `<h2>实施方案</h2>`, "实施方案（2025—2027年）", "实施方案（2025—2027年）"},
		{"no extracted title: the title element", `<title>页面标题</title>`, "", "页面标题"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := goquery.NewDocumentFromReader(strings.NewReader("<html><head></head><body>" + tt.body + "</body></html>"))
			if err != nil {
				t.Fatal(err)
			}
			if got := pickTitle(doc, tt.extracted); got != tt.want {
				t.Errorf("pickTitle = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVisibleTime(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // RFC3339 UTC; "" for none
	}{
		{"info line", "首页 > 通知公告 发布时间：2025-03-05 10:20　来源：连州市人民政府办公室", "2025-03-05T02:20:00Z"},
		{"a bare date is skipped for a later time", "发布日期：2025年3月5日 关键词：教育 发布时间: 2025-03-05 10:20", "2025-03-05T02:20:00Z"},
		{"only a bare date", "发布日期：2025年3月5日", ""},
		{"a date far from its label is not taken", "发布时间：" + strings.Repeat("（见附件）", 10) + "2025-03-05 10:20", ""},
		{"no label", "2025-03-05 10:20", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := visibleTime(tt.text)
			switch {
			case tt.want == "" && ok:
				t.Errorf("visibleTime = %v, want none", got)
			case tt.want != "" && (!ok || got.Format(time.RFC3339) != tt.want):
				t.Errorf("visibleTime = %v, %v; want %s", got, ok, tt.want)
			}
		})
	}
}

func BenchmarkGeneric(b *testing.B) {
	u, _ := url.Parse("http://www.qingyuan.gov.test/zwgk/content/post_1.html")
	b.SetBytes(int64(len(govPage)))
	for b.Loop() {
		if _, err := Generic([]byte(govPage), u, nil); err != nil {
			b.Fatal(err)
		}
	}
}
