package api

import (
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"zhizhi/internal/corpus/search"
)

// maxSearchOffset bounds how deep a client pages a ranked list.
const maxSearchOffset = 10000

type searchHitView struct {
	ID              string   `json:"id"`
	Rev             int      `json:"rev"`
	Title           string   `json:"title"`
	TitleHighlights [][2]int `json:"title_highlights"`
	Snippet         string   `json:"snippet"`
	Highlights      [][2]int `json:"highlights"`
	Score           float64  `json:"score"`
	DocNoMatch      bool     `json:"doc_no_match"`
	Date            string   `json:"date"`
	DeptCode        string   `json:"dept_code"`
	DeptName        string   `json:"dept_name"`
	Channel         string   `json:"channel"`
	Publisher       string   `json:"publisher"`
	DocNo           string   `json:"doc_no"`
	URL             string   `json:"url"`
}

type searchResultView struct {
	Release string          `json:"release"`
	Total   int             `json:"total"`
	Limit   int             `json:"limit"`
	Offset  int             `json:"offset"`
	Hits    []searchHitView `json:"hits"`
}

// corpusSearch searches the active release: q (terms separated by spaces,
// each found as written — one and two Chinese characters included —
// in the title, text or 文号), filtered by dept (department code),
// channel, publisher, docno, from and to (YYYY-MM-DD), ranked by BM25, a
// page of limit hits from offset. Each hit has a snippet and the
// highlighted spans of snippet and title as character offsets. A query
// the index refuses is a 400 whose detail is its Chinese message, to be
// shown to the user as it is.
func (h *handler) corpusSearch(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	q := newQuery(r)
	sq := search.Query{Text: q.free("q"), DeptCode: q.free("dept"), Channel: q.free("channel"), Publisher: q.free("publisher"),
		DocNo: q.free("docno"), From: q.free("from"), To: q.free("to")}
	limit, offset := q.free("limit"), q.free("offset")
	if err := q.check(); err != nil {
		h.fail(w, r, err)
		return
	}
	sq.Limit = search.DefaultLimit
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > search.MaxLimit {
			h.fail(w, r, invalid("每页条数 limit 应为 1 到 %d 之间的整数，收到“%s”", search.MaxLimit, clipParam(limit)))
			return
		}
		sq.Limit = n
	}
	if offset != "" {
		n, err := strconv.Atoi(offset)
		if err != nil || n < 0 || n > maxSearchOffset {
			h.fail(w, r, invalid("起始位置 offset 应为 0 到 %d 之间的整数，收到“%s”", maxSearchOffset, clipParam(offset)))
			return
		}
		sq.Offset = n
	}
	ctx := r.Context()
	rel, err := h.releaseFor(ctx, "")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := rel.Search(ctx, sq)
	var qe *search.QueryError
	if errors.As(err, &qe) {
		h.fail(w, r, invalid("%s", qe.Msg))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := searchResultView{Release: rel.Version, Total: res.Total, Limit: sq.Limit, Offset: sq.Offset, Hits: []searchHitView{}}
	for _, hit := range res.Hits {
		out.Hits = append(out.Hits, searchHitView{ID: hit.ID, Rev: hit.Revision, Title: hit.Title,
			TitleHighlights: charSpans(hit.Title, hit.TitleHighlights), Snippet: hit.Snippet,
			Highlights: charSpans(hit.Snippet, hit.Highlights), Score: hit.Score, DocNoMatch: hit.DocNoMatch, Date: hit.Date,
			DeptCode: hit.DeptCode, DeptName: hit.DeptName, Channel: hit.Channel, Publisher: hit.Publisher, DocNo: hit.DocNo,
			URL: hit.URL})
	}
	h.ok(w, r, out)
}

// free is a parameter's single value, unchecked: the endpoint checks it
// itself (search does, with messages in Chinese). Absent is "".
func (q *query) free(name string) string {
	q.used[name] = true
	vals, ok := q.v[name]
	if !ok {
		return ""
	}
	if len(vals) != 1 {
		q.bad(name, "give it once, not %d times", len(vals))
		return ""
	}
	return vals[0]
}

// clipParam is a value quoted back in a message: valid UTF-8, short.
func clipParam(s string) string {
	if !utf8.ValidString(s) {
		return "（无效的 UTF-8）"
	}
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "…"
	}
	return printable(s)
}

// charSpans turns half-open byte spans of s into character (code point)
// spans, the offsets a reader's string type indexes by.
func charSpans(s string, spans [][2]int) [][2]int {
	out := make([][2]int, 0, len(spans))
	for _, sp := range spans {
		if sp[0] < 0 || sp[1] > len(s) || sp[0] > sp[1] {
			continue
		}
		start := utf8.RuneCountInString(s[:sp[0]])
		out = append(out, [2]int{start, start + utf8.RuneCountInString(s[sp[0]:sp[1]])})
	}
	return out
}
