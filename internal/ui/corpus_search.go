package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/search"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// searchPageSize is how many hits one page of the search shows.
const searchPageSize = 10

type searchForm struct {
	Q, Dept, Channel, Publisher, DocNo, From, To string
}

type searchHit struct {
	search.Hit
	TitleSegs, SnippetSegs []segment
	GBT7714                string
}

type searchData struct {
	F        searchForm
	Depts    []model.Department
	Version  string // the active release searched; "" when none is active
	NoActive bool
	Asked    bool // the form was sent (a query or a filter)
	Total    int
	Hits     []searchHit
	Page     int
	PrevURL  string
	NextURL  string
}

// corpusSearch searches the active release: words (one or two Chinese
// characters work), department, channel, publisher, 文号 and a date
// range; each hit links to its work and carries its citation.
func (c *console) corpusSearch(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-search") {
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	d := searchData{F: searchForm{Q: q.Get("q"), Dept: q.Get("dept"), Channel: strings.TrimSpace(q.Get("channel")),
		Publisher: strings.TrimSpace(q.Get("publisher")), DocNo: strings.TrimSpace(q.Get("doc_no")),
		From: q.Get("from"), To: q.Get("to")}, Page: 1}
	var err error
	if d.Depts, err = c.store.ListDepartments(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	p := page{Title: "检索", Active: "corpus-search"}
	rel, err := c.corpus.Active(ctx)
	if errors.Is(err, corpus.ErrNoActive) {
		d.NoActive = true
		p.Data = d
		c.render(w, r, http.StatusOK, "corpus_search", p)
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Version = rel.Version
	f := d.F
	d.Asked = strings.TrimSpace(f.Q) != "" || f.Dept != "" || f.Channel != "" || f.Publisher != "" || f.DocNo != "" || f.From != "" || f.To != ""
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			p.Error, p.Data = "页码无效，请从第一页重新浏览。", d
			c.render(w, r, http.StatusBadRequest, "corpus_search", p)
			return
		}
		d.Page = n
	}
	if !d.Asked {
		p.Data = d
		c.render(w, r, http.StatusOK, "corpus_search", p)
		return
	}
	res, err := rel.Search(ctx, search.Query{Text: f.Q, DeptCode: f.Dept, Channel: f.Channel, Publisher: f.Publisher,
		DocNo: f.DocNo, From: f.From, To: f.To, Limit: searchPageSize, Offset: (d.Page - 1) * searchPageSize})
	var qerr *search.QueryError
	switch {
	case errors.As(err, &qerr):
		p.Error, p.Data = "查询无效："+qerr.Msg, d
		c.render(w, r, http.StatusBadRequest, "corpus_search", p)
		return
	case errors.Is(err, search.ErrBadQuery):
		p.Error, p.Data = "查询无效，请修改后重试。", d
		c.render(w, r, http.StatusBadRequest, "corpus_search", p)
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	d.Total = res.Total
	for _, h := range res.Hits {
		sh := searchHit{Hit: h, TitleSegs: highlight(h.Title, h.TitleHighlights), SnippetSegs: highlight(h.Snippet, h.Highlights)}
		if gb, err := rel.Citation(h.ID, "gbt7714"); err == nil {
			sh.GBT7714 = gb
		} else if !errors.Is(err, store.ErrNotFound) {
			c.log.Warn("citation of a search hit", "work", h.ID, "err", err)
		}
		d.Hits = append(d.Hits, sh)
	}
	v := f.values()
	if d.Page > 1 {
		v.Set("page", strconv.Itoa(d.Page-1))
		if d.Page == 2 {
			v.Del("page")
		}
		d.PrevURL = listURL("/corpus/search", v)
	}
	if d.Page*searchPageSize < res.Total {
		v.Set("page", strconv.Itoa(d.Page+1))
		d.NextURL = listURL("/corpus/search", v)
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "corpus_search", p)
}

func (f searchForm) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Q, "dept": f.Dept, "channel": f.Channel, "publisher": f.Publisher,
		"doc_no": f.DocNo, "from": f.From, "to": f.To} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// highlight cuts s at the highlight spans (half-open byte offsets, sorted,
// not overlapping, as search promises). A span the text cannot hold — out
// of range, backwards, overlapping or inside a character — is dropped
// rather than trusted, so the text is always shown whole and as text.
func highlight(s string, spans [][2]int) []segment {
	var out []segment
	last := 0
	for _, h := range spans {
		a, b := h[0], h[1]
		if a < last || b <= a || b > len(s) || !utf8.RuneStart(s[a]) || (b < len(s) && !utf8.RuneStart(s[b])) {
			continue
		}
		if a > last {
			out = append(out, segment{Text: s[last:a]})
		}
		out = append(out, segment{Text: s[a:b], Mark: true})
		last = b
	}
	if last < len(s) {
		out = append(out, segment{Text: s[last:]})
	}
	return out
}

// corpusCitation gives a work's citation from the active release:
// CSL-JSON or BibTeX as a file to download, GB/T 7714 as text.
func (c *console) corpusCitation(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-search") {
		return
	}
	id := r.PathValue("id")
	format := r.URL.Query().Get("format")
	var ctype, ext string
	switch format {
	case "csl-json":
		ctype, ext = "application/vnd.citationstyles.csl+json; charset=utf-8", "json"
	case "bibtex":
		ctype, ext = "application/x-bibtex; charset=utf-8", "bib"
	case "gbt7714":
		ctype, ext = "text/plain; charset=utf-8", "txt"
	default:
		c.render(w, r, http.StatusBadRequest, "error", page{Title: "请求无效", Active: "corpus-search",
			Data: errorData{Code: http.StatusBadRequest, Heading: "请求无效", Message: "引用格式无效：可选 CSL-JSON、BibTeX 或 GB/T 7714。"}})
		return
	}
	rel, err := c.corpus.Active(r.Context())
	if errors.Is(err, corpus.ErrNoActive) {
		c.notFound(w, r, "还没有启用任何发布，没有可引用的版本。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	text, err := rel.Citation(id, format)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "当前生效的发布 "+rel.Version+" 中没有这件作品。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="`+id+"-"+rel.Version+"."+ext+`"`)
	_, _ = w.Write([]byte(text))
}
