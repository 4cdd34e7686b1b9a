package extract

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// datelessBody is a notice that states no date anywhere a reader would see.
const datelessBody = `<h1>关于做好2024年汛期安全防范工作的通知</h1><div class="content">
<p>各县（市、区）人民政府，市政府各部门：为切实做好今年汛期安全防范工作，确保人民群众生命财产安全，现就有关事项通知如下。</p>
<p>一、高度重视防汛工作。各地各部门要充分认识防汛工作的重要性和紧迫性，层层压实责任，确保各项措施落到实处。</p>
<p>二、加强监测预警。气象、水利等部门要加强会商研判，及时发布预警信息，提前转移受威胁群众。</p></div>`

// A number in a path is not a publication date: neither the page's URL, its
// canonical link nor its links may give a page that states no date one.
func TestGenericInventsNoDateFromPaths(t *testing.T) {
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>关于做好2024年汛期安全防范工作的通知</title>
<link rel="canonical" href="http://www.qingyuan.gov.test/zwgk/2024/0305/20240305.html">
<meta property="og:url" content="http://www.qingyuan.gov.test/zwgk/2024/03/05/t20240305_1.html"></head><body>` +
		datelessBody + `<a href="/zwgk/2024/03/05/t20240305_2.html">上一篇</a>
<p>原文：http://www.qingyuan.gov.test/2024/03/05/a.html</p></body></html>`
	for _, raw := range []string{
		"http://www.qingyuan.gov.test/zwgk/2024/0305/20240305.html",
		"http://www.qingyuan.gov.test/zwgk/2024/03/05/t20240305_1.html",
		"",
	} {
		var u *url.URL
		if raw != "" {
			u, _ = url.Parse(raw)
		}
		p, err := Generic([]byte(page), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.PublishTime != nil {
			t.Errorf("page at %q: publish time %v invented from a path, want none", raw, p.PublishTime)
		}
	}
}

// A date the page does state, outside any label the extractor knows, is
// still found, as a Beijing date (not midnight UTC); the year in the title
// ("2024年") is not taken for 1 January.
func TestGenericKeepsStatedDate(t *testing.T) {
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>关于做好2024年汛期安全防范工作的通知</title></head><body>` +
		strings.Replace(datelessBody, "</div>", `<p style="text-align:right">清远市应急管理局<br>2024-03-05</p></div>`, 1) + `</body></html>`
	p, err := Generic([]byte(page), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 5 March 2024 in Beijing begins at 16:00 UTC on the 4th.
	if want := time.Date(2024, 3, 4, 16, 0, 0, 0, time.UTC); p.PublishTime == nil || !p.PublishTime.Equal(want) {
		t.Errorf("publish time %v, want %v", p.PublishTime, want)
	}
}
