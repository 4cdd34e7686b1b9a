package sim

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// pagesOf lists every URL a full crawl touches: indexes, lists, details,
// attachments.
func pagesOf(w *World) []string {
	var us []string
	for _, s := range w.sites {
		base := "http://" + s.Host
		us = append(us, base+"/robots.txt", base+"/")
		for _, d := range s.Depts {
			if s.Kind == kindGkmlpt {
				us = append(us, base+"/"+d.Path+"/gkmlpt/index")
			}
			for _, c := range d.Columns {
				switch s.Kind {
				case kindGkmlpt:
					us = append(us, fmt.Sprintf("%s/%s/gkmlpt/api/all/%s?page=1&sid=%s", base, d.Path, c.ID, s.SID))
				case kindGov:
					us = append(us, base+"/"+c.ID+"/feed.json")
				default:
					us = append(us, base+"/"+c.ID+"/")
				}
			}
		}
	}
	for _, a := range w.Truth() {
		us = append(us, a.URL)
		for _, f := range a.Attachments {
			us = append(us, f.URL)
		}
	}
	return us
}

func TestSameSeedSameBytes(t *testing.T) {
	w1 := startWorld(t, Options{Seed: 7})
	w2 := startWorld(t, Options{Seed: 7})
	w3 := startWorld(t, Options{Seed: 8})
	c1, c2 := client(w1), client(w2)
	k1, k2 := clearance(t, w1, c1), clearance(t, w2, c2)
	pages := pagesOf(w1)
	if len(pages) < 150 {
		t.Fatalf("only %d pages in the world", len(pages))
	}
	for _, u := range pages {
		r1 := fetchAs(t, c1, k1, u)
		r2 := fetchAs(t, c2, k2, u)
		if r1.status != http.StatusOK || r2.status != http.StatusOK {
			t.Fatalf("%s: status %d / %d", u, r1.status, r2.status)
		}
		if !bytes.Equal(r1.body, r2.body) {
			t.Fatalf("%s: same seed, different bytes", u)
		}
		if r1.header.Get("ETag") != r2.header.Get("ETag") || r1.header.Get("Last-Modified") != r2.header.Get("Last-Modified") {
			t.Fatalf("%s: same seed, different validators", u)
		}
	}
	j1, _ := json.Marshal(w1.Truth())
	j2, _ := json.Marshal(w2.Truth())
	j3, _ := json.Marshal(w3.Truth())
	if !bytes.Equal(j1, j2) {
		t.Error("same seed, different truth")
	}
	if bytes.Equal(j1, j3) {
		t.Error("different seeds, same truth")
	}
	// The same advances keep the worlds identical.
	for _, d := range []time.Duration{26 * time.Hour, 7 * 24 * time.Hour} {
		r1, r2 := w1.Advance(d), w2.Advance(d)
		if fmt.Sprint(r1) != fmt.Sprint(r2) {
			t.Fatalf("advance %v: reports differ:\n%v\n%v", d, r1, r2)
		}
	}
	j1, _ = json.Marshal(w1.Truth())
	j2, _ = json.Marshal(w2.Truth())
	if !bytes.Equal(j1, j2) {
		t.Error("same seed and advances, different truth")
	}
}

func TestChallenge(t *testing.T) {
	w := startWorld(t, Options{Seed: 1})
	c := client(w)
	const base = "http://www.qingyuan.gov.test"
	truth := w.Truth()
	var withFile TruthArticle
	for _, a := range truth {
		if a.SiteCode == "qingyuan" && len(a.Attachments) > 0 {
			withFile = a
			break
		}
	}
	if withFile.URL == "" {
		t.Fatal("no city article with an attachment")
	}
	protected := []string{
		base + "/qyfgw/gkmlpt/index",
		base + "/qyfgw/gkmlpt/api/all/14002?page=1&sid=755010",
		withFile.URL,
		withFile.Attachments[0].URL,
		base + "/",
	}
	for _, u := range protected {
		r := get(t, c, "GET", u)
		if r.status != http.StatusPreconditionFailed {
			t.Errorf("plain client %s: status %d, want 412", u, r.status)
		}
		if !bytes.Contains(r.body, []byte(ChallengeMarker)) || !bytes.Contains(r.body, []byte("location.reload()")) {
			t.Errorf("%s: 412 body is not the challenge page", u)
		}
		if bytes.Contains(r.body, []byte(CaptchaMarker)) || bytes.Contains(r.body, []byte("验证码")) {
			t.Errorf("%s: challenge page looks like a CAPTCHA", u)
		}
	}
	if r := get(t, c, "GET", base+"/robots.txt"); r.status != http.StatusOK {
		t.Errorf("robots.txt behind the challenge: status %d", r.status)
	}
	// Counties answer plain clients.
	if r := get(t, c, "GET", "http://www.qingcheng.gov.test/qcfgw/gkmlpt/index"); r.status != http.StatusOK {
		t.Errorf("county index: status %d, want 200", r.status)
	}

	cookie := clearance(t, w, c)
	for _, u := range protected {
		r := get(t, c, "GET", u, "Cookie", cookie)
		if r.status != http.StatusOK {
			t.Errorf("with clearance %s: status %d", u, r.status)
		}
	}
	r := get(t, c, "GET", protected[0], "Cookie", cookie)
	if !bytes.Contains(r.body, []byte("window._CONFIG")) {
		t.Error("cleared index lacks window._CONFIG")
	}

	// A cookie can't be stretched: another expiry breaks the signature.
	parts := strings.Split(strings.TrimPrefix(cookie, ClearanceCookie+"="), ".")
	forged := []string{
		fmt.Sprintf("%s=%s.%s.%s", ClearanceCookie, parts[0], "4102444800", parts[2]),
		fmt.Sprintf("%s=%s.%s.%s", ClearanceCookie, parts[0], parts[1], "00000000"),
		ClearanceCookie + "=garbage",
	}
	for _, f := range forged {
		if r := get(t, c, "GET", protected[0], "Cookie", f); r.status != http.StatusPreconditionFailed {
			t.Errorf("forged cookie %q: status %d, want 412", f, r.status)
		}
	}

	// Valid until the TTL on the sim clock, then challenged again.
	w.Advance(29 * time.Minute)
	if r := get(t, c, "GET", protected[0], "Cookie", cookie); r.status != http.StatusOK {
		t.Errorf("cookie at 29 min: status %d, want 200", r.status)
	}
	w.Advance(2 * time.Minute)
	if r := get(t, c, "GET", protected[0], "Cookie", cookie); r.status != http.StatusPreconditionFailed {
		t.Errorf("cookie at 31 min: status %d, want 412", r.status)
	}
}

// detailFields extracts title, attributes and body text from a detail page
// the way each site prints them.
func detailFields(t *testing.T, site string, body []byte) (title string, attrs map[string]string, text string) {
	t.Helper()
	if site == "lianzhou" {
		dec, err := simplifiedchinese.GB18030.NewDecoder().Bytes(body)
		if err != nil {
			t.Fatalf("decode GB18030: %v", err)
		}
		body = dec
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	attrs = map[string]string{}
	label := func(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), "：") }
	switch site {
	case "gd_ref":
		doc.Find("div.introduce dt").Each(func(_ int, dt *goquery.Selection) {
			attrs[label(dt.Text())] = dt.Next().Text()
		})
		title = doc.Find("div.zw-title h3").Text()
		text = doc.Find("#zoom").Text()
	case "news":
		title = doc.Find("h1.headline").Text()
		text = doc.Find("article.article-body").Text()
	default:
		doc.Find("td.first, td.t1, th.label").Each(func(_ int, l *goquery.Selection) {
			attrs[label(l.Text())] = l.Next().Text()
		})
		switch site {
		case "lianzhou":
			title = doc.Find("h2.title").Text()
			text = doc.Find("#zoom").Text()
		case "gov_ref":
			title = attrs["标\u3000\u3000题"]
			text = doc.Find("#UCAP-CONTENT").Text()
		default:
			title = doc.Find("h1.title").Text()
			text = doc.Find("#zoom").Text()
		}
	}
	return title, attrs, text
}

func squash(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\u3000", " ")), "")
}

func TestTruthAgreesWithPages(t *testing.T) {
	w := startWorld(t, Options{Seed: 3})
	c := client(w)
	cookie := clearance(t, w, c)
	truth := w.Truth()
	sites := map[string]int{}
	for _, a := range truth {
		sites[a.SiteCode]++
		r := fetchAs(t, c, cookie, a.URL)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d", a.URL, r.status)
		}
		title, attrs, text := detailFields(t, a.SiteCode, r.body)
		if title != a.Title {
			t.Errorf("%s: page title %q, truth %q", a.URL, title, a.Title)
		}
		if len(attrs) != len(a.RawAttributes) {
			t.Errorf("%s: page has %d attributes, truth %d", a.URL, len(attrs), len(a.RawAttributes))
		}
		for l, v := range a.RawAttributes {
			if attrs[l] != v {
				t.Errorf("%s: attribute %q = %q on page, %q in truth", a.URL, l, attrs[l], v)
			}
		}
		if squash(text) != squash(a.BodyText) {
			t.Errorf("%s: body text differs from truth\npage:  %.80s\ntruth: %.80s", a.URL, squash(text), squash(a.BodyText))
		}
		n := utf8.RuneCountInString(a.BodyText)
		if min, max := 300, 5000; a.SiteCode == "news" {
			if n < 5000 || n > 20000 {
				t.Errorf("%s: news body of %d chars", a.URL, n)
			}
		} else if n < min || n > max {
			t.Errorf("%s: body of %d chars, want %d–%d", a.URL, n, min, max)
		}
		if a.PublishTime.After(w.Now()) || a.PublishTime.Location() != time.UTC {
			t.Errorf("%s: publish time %v not past UTC", a.URL, a.PublishTime)
		}
		for _, f := range a.Attachments {
			r := fetchAs(t, c, cookie, f.URL)
			sum := sha256.Sum256(r.body)
			if r.status != http.StatusOK || hex.EncodeToString(sum[:]) != f.SHA256 || len(r.body) != f.Size {
				t.Errorf("%s: attachment status %d, sha256/size differ from truth", f.URL, r.status)
			}
		}
	}
	for _, code := range []string{"qingyuan", "qingcheng", "yingde", "lianzhou", "gd_ref", "gov_ref", "news"} {
		if sites[code] == 0 {
			t.Errorf("truth has no article of %s", code)
		}
	}
}

func TestGkmlptListAgreesWithTruth(t *testing.T) {
	w := startWorld(t, Options{Seed: 3})
	c := client(w)
	byURL := map[string]TruthArticle{}
	for _, a := range w.Truth() {
		byURL[a.URL] = a
	}
	const api = "http://www.qingcheng.gov.test/qcfgw/gkmlpt/api/all/%s?page=%d&sid=%s"
	tests := []struct {
		name, column, sid string
		page              int
		status, items     int
		total             int
	}{
		{"first page", "2850", "763042", 1, 200, 8, 8},
		{"past the end", "2850", "763042", 2, 200, 0, 8},
		{"wrong sid", "2850", "000000", 1, 400, 0, 0},
		{"missing sid", "2850", "", 1, 400, 0, 0},
		{"unknown column", "9999", "763042", 1, 404, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, c, "GET", fmt.Sprintf(api, tt.column, tt.page, tt.sid))
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 400 {
				if string(r.body) != `{"error":"invalid sid"}` {
					t.Errorf("body %s", r.body)
				}
				return
			}
			if tt.status != 200 {
				return
			}
			var l gkList
			if err := json.Unmarshal(r.body, &l); err != nil {
				t.Fatal(err)
			}
			if len(l.Articles) != tt.items || l.Total != tt.total || l.Classify.PostCount != tt.total {
				t.Fatalf("items %d total %d post_count %d", len(l.Articles), l.Total, l.Classify.PostCount)
			}
			for _, it := range l.Articles {
				a, ok := byURL[it.URL]
				if !ok {
					t.Fatalf("list item %s not in truth", it.URL)
				}
				if it.Title != a.Title || it.DocumentNumber != a.DocNo || it.Identifier != a.IndexNo ||
					it.Publisher != a.Publisher || it.Keywords != a.TopicWords || it.ClassifyMainName != a.OpenCategory ||
					fmt.Sprint(it.ID) != a.NativePostID || it.DisplayPublishTime != a.PublishTime.Unix() {
					t.Errorf("list item %d disagrees with truth", it.ID)
				}
			}
		})
	}

	// Pagination happens on the city portal, and a group node lists its children's posts.
	cookie := clearance(t, w, c)
	for _, tt := range []struct {
		column         string
		page, n, total int
	}{{"14002", 1, 10, 11}, {"14002", 2, 1, 11}, {"14001", 1, 8, 8}} {
		r := get(t, c, "GET", fmt.Sprintf("http://www.qingyuan.gov.test/qyfgw/gkmlpt/api/all/%s?page=%d&sid=755010", tt.column, tt.page), "Cookie", cookie)
		var l gkList
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatal(err)
		}
		if len(l.Articles) != tt.n || l.Total != tt.total {
			t.Errorf("column %s page %d: %d items of %d, want %d of %d", tt.column, tt.page, len(l.Articles), l.Total, tt.n, tt.total)
		}
	}
}

func TestTemplateSiteQuirks(t *testing.T) {
	w := startWorld(t, Options{Seed: 5})
	c := client(w)

	// GB18030, declared only in <meta>.
	r := get(t, c, "GET", "http://www.lianzhou.gov.test/tzgg/index.html")
	if ct := r.header.Get("Content-Type"); ct != "text/html" {
		t.Errorf("lianzhou Content-Type %q, want bare text/html", ct)
	}
	if !bytes.Contains(r.body, []byte(`<meta charset="gb2312">`)) || utf8.Valid(r.body) {
		t.Error("lianzhou list is not GB18030 declared by meta")
	}
	dec, _ := simplifiedchinese.GB18030.NewDecoder().Bytes(r.body)
	if !strings.Contains(string(dec), "通知公告") {
		t.Error("lianzhou list does not decode to its column name")
	}
	paths := []struct {
		u      string
		status int
	}{
		{"http://www.lianzhou.gov.test/tzgg/", 200},
		{"http://www.lianzhou.gov.test/tzgg/index_1.html", 200}, // the second page
		{"http://www.lianzhou.gov.test/tzgg/index_2.html", 404},
		{"http://www.lianzhou.gov.test/tzgg/index_0.html", 404},
		{"http://www.gd.gov.test/zwgk/wjk/index_2.html", 200},
		{"http://www.gd.gov.test/zwgk/wjk/index_1.html", 404},
		{"http://www.gov.test/zhengce/zuixin/feed.json", 200},
		{"http://www.gov.test/zhengce/zuixin/feed_1.json", 200},
		{"http://www.gov.test/zhengce/zuixin/feed_9.json", 404},
		{"http://www.news.test/news/?page=2", 200},
		{"http://www.news.test/news/?page=3", 404},
		{"http://www.gd.gov.test/no/such/page.html", 404},
	}
	for _, p := range paths {
		if r := get(t, c, "GET", p.u); r.status != p.status {
			t.Errorf("%s: status %d, want %d", p.u, r.status, p.status)
		}
	}
	// gd paginates through a next link; its robots.txt shuts one column.
	r = get(t, c, "GET", "http://www.gd.gov.test/zwgk/wjk/")
	if !bytes.Contains(r.body, []byte(`<a class="next" href="index_2.html">`)) {
		t.Error("gd first page lacks its next link")
	}
	r = get(t, c, "GET", "http://www.gd.gov.test/robots.txt")
	if !bytes.Contains(r.body, []byte("Disallow: /zwgk/rsrm/")) {
		t.Errorf("gd robots.txt: %s", r.body)
	}
	for _, a := range w.Truth() {
		want := a.SiteCode == "gd_ref" && a.ColumnID == "zwgk/rsrm"
		if a.RobotsDisallowed != want {
			t.Errorf("%s: robots_disallowed %v", a.URL, a.RobotsDisallowed)
		}
	}
	// The gov feed links the next page.
	r = get(t, c, "GET", "http://www.gov.test/zhengce/zuixin/feed.json")
	var feed govFeedDoc
	if err := json.Unmarshal(r.body, &feed); err != nil {
		t.Fatal(err)
	}
	if feed.Data.Next != "http://www.gov.test/zhengce/zuixin/feed_1.json" || len(feed.Data.List) != 4 {
		t.Errorf("gov feed: next %q, %d items", feed.Data.Next, len(feed.Data.List))
	}
}

func TestConditionalRequests(t *testing.T) {
	w := startWorld(t, Options{Seed: 2})
	c := client(w)
	truth := w.Truth()
	var detail string
	for _, a := range truth {
		if a.SiteCode == "gd_ref" {
			detail = a.URL
			break
		}
	}
	list := "http://www.qingcheng.gov.test/qcfgw/gkmlpt/api/all/2851?page=1&sid=763042"
	for _, u := range []string{detail, list, "http://www.lianzhou.gov.test/tzgg/"} {
		r := get(t, c, "GET", u)
		etag, lm := r.header.Get("ETag"), r.header.Get("Last-Modified")
		if etag == "" || strings.HasPrefix(etag, "W/") || lm == "" {
			t.Fatalf("%s: ETag %q Last-Modified %q", u, etag, lm)
		}
		if r := get(t, c, "GET", u, "If-None-Match", etag); r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s If-None-Match: status %d, %d bytes", u, r.status, len(r.body))
		}
		if r := get(t, c, "GET", u, "If-Modified-Since", lm); r.status != http.StatusNotModified {
			t.Errorf("%s If-Modified-Since: status %d", u, r.status)
		}
		if r := get(t, c, "GET", u, "If-None-Match", `"stale"`); r.status != http.StatusOK {
			t.Errorf("%s stale ETag: status %d", u, r.status)
		}
		h := get(t, c, "HEAD", u)
		if h.status != http.StatusOK || len(h.body) != 0 || h.header.Get("Content-Length") != fmt.Sprint(len(r.body)) || h.header.Get("ETag") != etag {
			t.Errorf("%s HEAD: status %d, body %d, Content-Length %s", u, h.status, len(h.body), h.header.Get("Content-Length"))
		}
		z := get(t, c, "GET", u, "Accept-Encoding", "gzip")
		zr, err := gzip.NewReader(bytes.NewReader(z.body))
		if z.header.Get("Content-Encoding") != "gzip" || err != nil {
			t.Fatalf("%s: no gzip when asked", u)
		}
		plain, _ := io.ReadAll(zr)
		if !bytes.Equal(plain, r.body) {
			t.Errorf("%s: gzip body differs", u)
		}
		// A validator stored from the gzip form still matches.
		if r := get(t, c, "GET", u, "If-None-Match", z.header.Get("ETag")); r.status != http.StatusNotModified {
			t.Errorf("%s: gzip ETag not accepted: %d", u, r.status)
		}
	}

	// After a week: edited articles and changed lists answer 200, the rest 304.
	before := map[string]response{}
	for _, a := range truth {
		if a.SiteCode != "qingyuan" {
			before[a.URL] = get(t, c, "GET", a.URL)
		}
	}
	listBefore := get(t, c, "GET", list)
	rep := w.Advance(7 * 24 * time.Hour)
	if len(rep.Published) == 0 || len(rep.Edited) == 0 {
		t.Fatalf("a week published %d and edited %d articles", len(rep.Published), len(rep.Edited))
	}
	edited := map[string]bool{}
	for _, u := range rep.Edited {
		edited[u] = true
	}
	changed := 0
	for u, old := range before {
		etag := get(t, c, "GET", u, "If-None-Match", old.header.Get("ETag"))
		ims := get(t, c, "GET", u, "If-Modified-Since", old.header.Get("Last-Modified"))
		if edited[u] {
			changed++
			if etag.status != http.StatusOK || ims.status != http.StatusOK || bytes.Equal(etag.body, old.body) {
				t.Errorf("%s edited: conditional statuses %d/%d", u, etag.status, ims.status)
			}
		} else if etag.status != http.StatusNotModified || ims.status != http.StatusNotModified {
			t.Errorf("%s unchanged: conditional statuses %d/%d", u, etag.status, ims.status)
		}
	}
	if changed == 0 {
		t.Error("no edited article outside the city portal to check")
	}
	// A list answers 304 exactly when its bytes are unchanged.
	listAfter := get(t, c, "GET", list)
	want := http.StatusNotModified
	if !bytes.Equal(listAfter.body, listBefore.body) {
		want = http.StatusOK
	}
	if got := get(t, c, "GET", list, "If-None-Match", listBefore.header.Get("ETag")).status; got != want {
		t.Errorf("list conditional after advance: %d, want %d", got, want)
	}
	if got := get(t, c, "GET", list, "If-Modified-Since", listBefore.header.Get("Last-Modified")).status; got != want {
		t.Errorf("list If-Modified-Since after advance: %d, want %d", got, want)
	}
}

func TestAdvancePublishesAndEdits(t *testing.T) {
	w := startWorld(t, Options{Seed: 4})
	before := map[string]TruthArticle{}
	for _, a := range w.Truth() {
		before[a.URL] = a
	}
	start := w.Now()
	rep := w.Advance(10 * 24 * time.Hour)
	if !w.Now().Equal(start.Add(240 * time.Hour)) {
		t.Fatalf("clock %v after advancing 10 days from %v", w.Now(), start)
	}
	after := map[string]TruthArticle{}
	for _, a := range w.Truth() {
		after[a.URL] = a
	}
	if len(after) != len(before)+len(rep.Published) {
		t.Errorf("truth grew by %d, report says %d", len(after)-len(before), len(rep.Published))
	}
	for _, u := range rep.Published {
		a, ok := after[u]
		if !ok || before[u].URL != "" {
			t.Errorf("%s: published but not new in truth", u)
		}
		if a.PublishTime.Before(start) || a.PublishTime.After(w.Now()) {
			t.Errorf("%s: publish time %v outside the advance", u, a.PublishTime)
		}
	}
	for _, u := range rep.Edited {
		if after[u].Version < 2 || after[u].BodyText == before[u].BodyText || !after[u].ModifiedTime.Equal(w.Now().UTC()) {
			t.Errorf("%s: edit not reflected in truth", u)
		}
	}
	c := client(w)
	cookie := clearance(t, w, c)
	for _, u := range rep.Published {
		if r := fetchAs(t, c, cookie, u); r.status != http.StatusOK {
			t.Errorf("new article %s: status %d", u, r.status)
		}
	}
}
