package sim

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// routeGkmlpt serves the gkmlpt CMS: the _CONFIG index page, the
// JSON list API and a home page. Details and attachments are looked up by
// path before this is reached.
func (w *World) routeGkmlpt(s *site, r *http.Request) *resource {
	path := r.URL.Path
	if path == "/" || path == "/index.html" {
		return w.gkHome(s)
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 3 || parts[1] != "gkmlpt" {
		return nil
	}
	d := s.dept(parts[0])
	if d == nil {
		return nil
	}
	switch {
	case len(parts) == 3 && parts[2] == "index":
		return w.gkIndex(s, d)
	case len(parts) == 5 && parts[2] == "api" && parts[3] == "all":
		return w.gkAPI(s, d, parts[4], r)
	}
	return nil
}

func (s *site) dept(path string) *dept {
	for _, d := range s.Depts {
		if d.Path == path {
			return d
		}
	}
	return nil
}

// subtree returns c and its descendants' articles, newest first.
func (c *column) allArticles() []*article {
	if c.isLeaf() {
		return c.articles
	}
	var out []*article
	for _, ch := range c.Children {
		out = append(out, ch.allArticles()...)
	}
	sortNewest(out)
	return out
}

func sortNewest(as []*article) {
	// Insertion sort keeps equal times in input order and avoids a closure
	// import dance; lists are small.
	for i := 1; i < len(as); i++ {
		for j := i; j > 0 && newer(as[j], as[j-1]); j-- {
			as[j], as[j-1] = as[j-1], as[j]
		}
	}
}

func newer(a, b *article) bool {
	if !a.Published.Equal(b.Published) {
		return a.Published.After(b.Published)
	}
	return a.ID > b.ID
}

// listMod is the Last-Modified of a list: the newest publication in it (or
// the column's creation). Edits never change a list's bytes, so they don't
// change this either.
func listMod(c *column, as []*article) time.Time {
	mod := c.created
	for _, a := range as {
		if a.Published.After(mod) {
			mod = a.Published
		}
	}
	return mod
}

func (w *World) gkHome(s *site) *resource {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n<h1>%s</h1>\n<ul class=\"gkml-depts\">\n", esc(s.Name), esc(s.Name))
	mod := time.Time{}
	for _, d := range s.Depts {
		fmt.Fprintf(&b, "<li><a href=\"/%s/gkmlpt/index\">%s政府信息公开</a></li>\n", d.Path, esc(d.Name))
		for _, c := range d.Columns {
			if m := listMod(c, c.allArticles()); m.After(mod) {
				mod = m
			}
		}
	}
	b.WriteString("</ul>\n</body></html>\n")
	return &resource{ctype: "text/html; charset=utf-8", body: []byte(b.String()), mod: mod}
}

// gkIndex renders the dept's index page with window._CONFIG as a JavaScript
// object literal (single quotes, unquoted keys), as the real CMS does.
func (w *World) gkIndex(s *site, d *dept) *resource {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>%s政府信息公开目录</title>
<link rel="stylesheet" href="/gkmlpt/static/css/index.css">
</head>
<body>
<div id="app"><div class="header">%s政府信息公开</div><div class="loading">正在加载……</div></div>
<script type="text/javascript">
window._CONFIG = {
    SID: '%s',
    DEPT: '%s',
    SITE_NAME: '%s',
    TREE: [`, esc(d.Name), esc(d.Name), s.SID, d.Path, jsq(d.Name))
	mod := time.Time{}
	for i, c := range d.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		writeNode(&b, s, d, c)
		if m := listMod(c, c.allArticles()); m.After(mod) {
			mod = m
		}
	}
	b.WriteString(`]
};
</script>
<script type="text/javascript" src="/gkmlpt/static/js/app.js"></script>
</body>
</html>
`)
	return &resource{ctype: "text/html; charset=utf-8", body: []byte(b.String()), mod: mod}
}

func writeNode(b *strings.Builder, s *site, d *dept, c *column) {
	fmt.Fprintf(b, "{id: %s, name: '%s', post_count: %d, jump_url: '%s', children: [", c.ID, jsq(c.Name), len(c.allArticles()), jsq(c.JumpURL))
	for i, ch := range c.Children {
		if i > 0 {
			b.WriteString(", ")
		}
		writeNode(b, s, d, ch)
	}
	b.WriteString("]}")
}

// jsq escapes s for a single-quoted JavaScript string.
func jsq(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "<", `\x3c`).Replace(s)
}

func esc(s string) string { return html.EscapeString(s) }

type gkClassify struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	ParentID  int    `json:"parent_id"`
	PostCount int    `json:"post_count"`
	JumpURL   string `json:"jump_url"`
}

type gkAttachment struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Mime string `json:"mime"`
	Size int    `json:"size"`
	URL  string `json:"url"`
}

type gkArticle struct {
	ID                 int            `json:"id"`
	Title              string         `json:"title"`
	DocumentNumber     string         `json:"document_number"`
	Identifier         string         `json:"identifier"`
	Publisher          string         `json:"publisher"`
	Keywords           string         `json:"keywords"`
	DisplayPublishTime int64          `json:"display_publish_time"`
	Abstract           string         `json:"abstract"`
	ClassifyMainName   string         `json:"classify_main_name"`
	URL                string         `json:"url"`
	Attachment         []gkAttachment `json:"attachment"`
	IsAbolished        bool           `json:"is_abolished"`
}

type gkList struct {
	Classify gkClassify  `json:"classify"`
	Articles []gkArticle `json:"articles"`
	Total    int         `json:"total"`
}

func jsonResource(status int, v any, mod time.Time) *resource {
	body, _ := json.Marshal(v)
	return &resource{status: status, ctype: "application/json; charset=utf-8", body: body, mod: mod}
}

// gkAPI serves /{dept}/gkmlpt/api/all/{column}?page=&sid=.
func (w *World) gkAPI(s *site, d *dept, colID string, r *http.Request) *resource {
	q := r.URL.Query()
	if q.Get("sid") != s.SID {
		return jsonResource(http.StatusBadRequest, map[string]string{"error": "invalid sid"}, time.Time{})
	}
	c := findColumn(d.Columns, colID)
	if c == nil {
		return jsonResource(http.StatusNotFound, map[string]string{"error": "classify not found"}, time.Time{})
	}
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	all := c.allArticles()
	id, _ := strconv.Atoi(c.ID)
	parent := 0
	if c.parent != nil {
		parent, _ = strconv.Atoi(c.parent.ID)
	}
	out := gkList{
		Classify: gkClassify{ID: id, Name: c.Name, ParentID: parent, PostCount: len(all), JumpURL: c.JumpURL},
		Articles: []gkArticle{},
		Total:    len(all),
	}
	start := (page - 1) * s.PageSize
	for i := start; i < len(all) && i < start+s.PageSize; i++ {
		out.Articles = append(out.Articles, gkItem(s, all[i]))
	}
	return jsonResource(http.StatusOK, out, listMod(c, all))
}

func findColumn(cs []*column, id string) *column {
	for _, c := range cs {
		if c.ID == id {
			return c
		}
		if f := findColumn(c.Children, id); f != nil {
			return f
		}
	}
	return nil
}

func gkItem(s *site, a *article) gkArticle {
	it := gkArticle{
		ID: a.ID, Title: a.Title, DocumentNumber: a.DocNo, Identifier: a.IndexNo, Publisher: a.Publisher,
		Keywords: a.TopicWords, DisplayPublishTime: a.Published.Unix(), Abstract: abstract(a),
		ClassifyMainName: a.Category, URL: "http://" + s.Host + a.Path, IsAbolished: a.Abolished,
		Attachment: []gkAttachment{},
	}
	for _, f := range a.Attachments {
		it.Attachment = append(it.Attachment, gkAttachment{
			ID: f.ID, Name: f.Name, Type: f.Ext, Mime: mimeOf(f.Ext), Size: len(f.data), URL: "http://" + s.Host + f.Path,
		})
	}
	return it
}

// abstract is the opening of the first real paragraph, at most 100 runes.
func abstract(a *article) string {
	for _, b := range a.Blocks {
		if b.Kind == "p" && utf8.RuneCountInString(b.Text) > 30 {
			rs := []rune(b.Text)
			if len(rs) > 100 {
				rs = rs[:100]
			}
			return string(rs)
		}
	}
	return ""
}

func mimeOf(ext string) string {
	switch ext {
	case "pdf":
		return "application/pdf"
	case "docx":
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case "png":
		return "image/png"
	}
	return "application/octet-stream"
}
