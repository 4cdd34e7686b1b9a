package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// routeTemplate serves the list pages of the non-gkmlpt sites, each with its
// own pagination quirk:
//
//	lianzhou  /{col}/index.html, index_1.html, … (first page unnumbered, next is _1)
//	gd        /{col}/index.html, index_2.html, … found through "下一页" links
//	gov       /{col}/feed.json, feed_1.json, … (the HTML list is an empty shell)
//	news      /{col}/?page=2, … found through "下一页" links
func (w *World) routeTemplate(s *site, r *http.Request) *resource {
	p := r.URL.Path
	if p == "/" || p == "/index.html" {
		return w.templateHome(s)
	}
	for _, c := range s.Depts[0].Columns {
		prefix := "/" + c.ID + "/"
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		rest := strings.TrimPrefix(p, prefix)
		page, ok := listPage(s.Kind, rest, r)
		if !ok {
			return nil
		}
		return w.renderList(s, c, page)
	}
	return nil
}

// listPage maps the tail of a list URL to a 0-based page number.
func listPage(k siteKind, rest string, r *http.Request) (int, bool) {
	num := func(prefix, suffix string) (int, bool) {
		if !strings.HasPrefix(rest, prefix) || !strings.HasSuffix(rest, suffix) {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest, prefix), suffix))
		return n, err == nil && n >= 0 && strconv.Itoa(n) == strings.TrimSuffix(strings.TrimPrefix(rest, prefix), suffix)
	}
	switch k {
	case kindLianzhou:
		if rest == "" || rest == "index.html" {
			return 0, true
		}
		n, ok := num("index_", ".html")
		return n, ok && n >= 1
	case kindGD:
		if rest == "" || rest == "index.html" {
			return 0, true
		}
		n, ok := num("index_", ".html")
		return n - 1, ok && n >= 2
	case kindGov:
		if rest == "" || rest == "index.htm" {
			return -1, true // the HTML shell
		}
		if rest == "feed.json" {
			return 0, true
		}
		n, ok := num("feed_", ".json")
		return n, ok && n >= 1
	case kindNews:
		if rest != "" && rest != "index.html" {
			return 0, false
		}
		if q := r.URL.Query().Get("page"); q != "" {
			n, err := strconv.Atoi(q)
			return n - 1, err == nil && n >= 1
		}
		return 0, true
	}
	return 0, false
}

func (w *World) templateHome(s *site) *resource {
	var b strings.Builder
	charset := "utf-8"
	if s.Kind == kindLianzhou {
		charset = "gb2312"
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"%s\"><title>%s</title></head><body>\n<h1>%s</h1>\n<ul class=\"nav\">\n", charset, esc(s.Name), esc(s.Name))
	mod := time.Time{}
	for _, c := range s.Depts[0].Columns {
		fmt.Fprintf(&b, "<li><a href=\"/%s/\">%s</a></li>\n", c.ID, esc(c.Name))
		if m := listMod(c, c.articles); m.After(mod) {
			mod = m
		}
	}
	b.WriteString("</ul>\n</body></html>\n")
	return encodeFor(s, &resource{ctype: "text/html; charset=utf-8", body: []byte(b.String()), mod: mod})
}

// encodeFor turns a UTF-8 page of the GB18030 site into its real bytes.
func encodeFor(s *site, res *resource) *resource {
	if s.Kind != kindLianzhou {
		return res
	}
	enc, err := simplifiedchinese.GB18030.NewEncoder().Bytes(res.body)
	if err != nil {
		return nil
	}
	res.body = enc
	res.ctype = "text/html"
	return res
}

// renderList renders page (0-based) of column c; nil past the last page
// (except page 0 of an empty column).
func (w *World) renderList(s *site, c *column, page int) *resource {
	as := c.articles
	pages := max(1, (len(as)+s.PageSize-1)/s.PageSize)
	mod := listMod(c, as)
	if s.Kind == kindGov && page == -1 {
		return &resource{ctype: "text/html; charset=utf-8", mod: mod, body: []byte(fmt.Sprintf(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%s_中国政府网</title></head>
<body><div class="list" id="list"></div>
<script>fetch("feed.json").then(function (r) { return r.json(); }).then(function (d) { /* render d.data.list */ });</script>
</body></html>
`, esc(c.Name)))}
	}
	if page >= pages {
		return nil
	}
	var items []*article
	for i := page * s.PageSize; i < len(as) && i < (page+1)*s.PageSize; i++ {
		items = append(items, as[i])
	}
	switch s.Kind {
	case kindGov:
		return govFeed(s, c, items, page, pages, len(as), mod)
	case kindLianzhou:
		return encodeFor(s, &resource{ctype: "text/html", body: []byte(lianzhouList(s, c, items, page, pages)), mod: mod})
	default:
		return &resource{ctype: "text/html; charset=utf-8", body: []byte(linkedList(s, c, items, page, pages)), mod: mod}
	}
}

func lianzhouList(s *site, c *column, items []*article, page, pages int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<html>
<head>
<meta charset="gb2312">
<title>%s_%s</title>
</head>
<body>
<div class="top">当前位置：<a href="/">首页</a> &gt; %s</div>
<div class="list-box">
<ul class="list">
`, esc(c.Name), esc(s.Name), esc(c.Name))
	for _, a := range items {
		// TRS links are relative to the column directory.
		rel := "." + strings.TrimPrefix(a.Path, "/"+c.ID)
		fmt.Fprintf(&b, "<li><a href=\"%s\" title=\"%s\" target=\"_blank\">%s</a><span class=\"date\">%s</span></li>\n", rel, esc(a.Title), esc(a.Title), isoDate(a.Published))
	}
	fmt.Fprintf(&b, `</ul>
</div>
<div class="page"><script type="text/javascript">createPageHTML(%d, %d, "index", "html");</script></div>
</body>
</html>
`, pages, page)
	return b.String()
}

// linkedList is the gd and news list: pagination only through a next link.
func linkedList(s *site, c *column, items []*article, page, pages int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>%s_%s</title></head>
<body>
<div class="main">
<h2 class="col-title">%s</h2>
<ul class="list">
`, esc(c.Name), esc(s.Name), esc(c.Name))
	for _, a := range items {
		fmt.Fprintf(&b, "<li><a href=\"%s\" title=\"%s\">%s</a><span class=\"date\">%s</span></li>\n", a.Path, esc(a.Title), esc(a.Title), isoDate(a.Published))
	}
	b.WriteString("</ul>\n<div class=\"pagination\">")
	if page+1 < pages {
		next := fmt.Sprintf("index_%d.html", page+2)
		if s.Kind == kindNews {
			next = fmt.Sprintf("/%s/?page=%d", c.ID, page+2)
		}
		fmt.Fprintf(&b, "<a class=\"next\" href=\"%s\">下一页</a>", next)
	}
	fmt.Fprintf(&b, "<span class=\"info\">第%d页/共%d页</span></div>\n</div>\n</body>\n</html>\n", page+1, pages)
	return b.String()
}

type govItem struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	PubTime string `json:"pubtime"`
	Source  string `json:"source"`
}

type govFeedDoc struct {
	Code int `json:"code"`
	Data struct {
		List []govItem `json:"list"`
		Next string    `json:"next"`
	} `json:"data"`
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Total int `json:"total"`
}

func govFeed(s *site, c *column, items []*article, page, pages, total int, mod time.Time) *resource {
	var doc govFeedDoc
	doc.Data.List = []govItem{}
	for _, a := range items {
		doc.Data.List = append(doc.Data.List, govItem{ID: a.ID, Title: a.Title, URL: "http://" + s.Host + a.Path, PubTime: slashDate(a.Published), Source: a.Publisher})
	}
	if page+1 < pages {
		doc.Data.Next = fmt.Sprintf("http://%s/%s/feed_%d.json", s.Host, c.ID, page+1)
	}
	doc.Page, doc.Pages, doc.Total = page, pages, total
	return jsonResource(http.StatusOK, doc, mod)
}
