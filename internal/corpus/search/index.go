package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is one search. Text holds terms separated by white space; a
// document matches when every term occurs in its title, body or 文号
// (punctuation and white space inside a term are ignored, letters compared
// case-insensitively). Empty Text lists the documents the filters select,
// newest first. Quotes and operators have no special meaning.
type Query struct {
	Text string
	// Filters; empty means any. DeptCode, Channel and Publisher must equal
	// the document's field; DocNo matches a document whose 文号 is the same
	// after Normalize (so 〔〕, [] and () spell the same number).
	DeptCode, Channel, Publisher, DocNo string
	// From and To bound Date, inclusive, YYYY-MM-DD; a document without a
	// date never passes a date bound.
	From, To string
	// Limit is the page size: 10 when 0, at most MaxLimit. Offset skips that
	// many hits of the ranked list.
	Limit, Offset int
}

// Page sizes.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	// MaxQueryRunes bounds Query.Text and every filter value.
	MaxQueryRunes = 200
	// SnippetRunes is the length of a snippet window, before ellipses.
	SnippetRunes = 120
)

// Result is one page of hits.
type Result struct {
	Total int   // all hits of the query, not just this page
	Hits  []Hit // in rank order
}

// Hit is one matching document. Highlight spans are half-open [start, end)
// BYTE offsets into the string they belong to (Snippet or Title), sorted
// and never overlapping, so s[h[0]:h[1]] is the highlighted text.
type Hit struct {
	ID       string
	Revision int
	Title    string
	// TitleHighlights mark every query term in Title.
	TitleHighlights [][2]int
	// Score is -bm25(): higher is better; comparable only within one query.
	// 0 when browsing.
	Score float64
	// DocNoMatch is true when the query is this document's whole 文号; such
	// hits rank first.
	DocNoMatch bool
	// Snippet is about SnippetRunes of the body around the first match (the
	// body's start when the body does not match), line breaks as spaces,
	// with "…" where the body was cut.
	Snippet    string
	Highlights [][2]int
	Date       string
	DeptCode   string
	DeptName   string
	Channel    string
	Publisher  string
	DocNo      string
	URL        string
}

// ErrBadQuery is wrapped by every error Search returns for a query it
// refuses; errors.As with *QueryError gives the field and the message.
var ErrBadQuery = errors.New("查询无效")

// QueryError says which part of a query is wrong. Its message is Simplified
// Chinese, written to be shown to the user as it is.
type QueryError struct {
	Field string // "text", "dept_code", …, "from", "to", "limit", "offset"
	Msg   string
}

func (e *QueryError) Error() string { return e.Msg }
func (e *QueryError) Unwrap() error { return ErrBadQuery }

func badQuery(field, format string, args ...any) error {
	return &QueryError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Index is an open, read-only search index. It is safe for concurrent use.
type Index struct {
	db   *sql.DB
	docs int
	// reversed turns the ranking upside down; tests use it to show that the
	// quality floors catch a broken ranking.
	reversed bool
}

// Open opens the index file at path read-only. The file is opened as
// immutable: SQLite takes no locks and never writes, which is right for a
// release and wrong for a file something still writes. It is memory-mapped
// (up to 2 GiB), so connections share the operating system's page cache
// instead of each copying pages into its own.
func Open(path string) (*Index, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("search open: %w", err)
	}
	db, err := sql.Open("sqlite", fileURI(path)+"?mode=ro&immutable=1&_pragma=query_only(1)&_pragma=mmap_size(2147418112)")
	if err != nil {
		return nil, fmt.Errorf("search open %s: %w", path, err)
	}
	var format, docs string
	if err := db.QueryRow(`SELECT (SELECT value FROM meta WHERE key = 'format'), (SELECT value FROM meta WHERE key = 'docs')`).
		Scan(&format, &docs); err != nil {
		db.Close()
		return nil, fmt.Errorf("search open %s: not a search index (%v): build it with search.Build", path, err)
	}
	if format != formatVersion {
		db.Close()
		return nil, fmt.Errorf("search open %s: format %q, this program reads %q: rebuild the index", path, format, formatVersion)
	}
	n, _ := strconv.Atoi(docs)
	return &Index{db: db, docs: n}, nil
}

// Close releases the file.
func (x *Index) Close() error { return x.db.Close() }

// Docs is the number of documents in the index.
func (x *Index) Docs() int { return x.docs }

// plan is a checked query.
type plan struct {
	terms    [][]rune // normalized, distinct, non-empty
	match    string   // FTS5 MATCH expression; "" when browsing
	docNoKey string   // normalized whole text, for the exact 文号 boost
	where    []string
	args     []any
	limit    int
	offset   int
}

// check validates q and turns it into a plan.
func check(q Query) (*plan, error) {
	p := &plan{limit: q.Limit, offset: q.Offset}
	if err := checkText("text", "查询", q.Text); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(q.Text, unicode.IsSpace) {
		n := normalize(f)
		if len(n) == 0 || seen[string(n)] {
			continue
		}
		seen[string(n)] = true
		p.terms = append(p.terms, n)
	}
	if len(p.terms) > 0 {
		parts := make([]string, len(p.terms))
		var whole []rune
		for i, t := range p.terms {
			whole = append(whole, t...)
			if len(t) == 1 {
				parts[i] = `{tu bu nu} : "` + string(t) + `"`
			} else {
				parts[i] = `{tb bb nb} : "` + bigrams(t) + `"`
			}
		}
		p.match = strings.Join(parts, " AND ")
		p.docNoKey = string(whole)
	}
	for _, f := range []struct{ field, label, v, col string }{
		{"dept_code", "部门", q.DeptCode, "d.dept_code"},
		{"channel", "栏目", q.Channel, "d.channel"},
		{"publisher", "发布机构", q.Publisher, "d.publisher"},
	} {
		if f.v == "" {
			continue
		}
		if err := checkText(f.field, f.label+"筛选条件", f.v); err != nil {
			return nil, err
		}
		p.where = append(p.where, f.col+" = ?")
		p.args = append(p.args, f.v)
	}
	if q.DocNo != "" {
		if err := checkText("doc_no", "文号筛选条件", q.DocNo); err != nil {
			return nil, err
		}
		key := Normalize(q.DocNo)
		if key == "" {
			return nil, badQuery("doc_no", "文号筛选条件“%s”不含文字或数字", q.DocNo)
		}
		p.where = append(p.where, "d.doc_no_key = ?")
		p.args = append(p.args, key)
	}
	for _, f := range []struct{ field, label, v, op string }{
		{"from", "起始日期", q.From, ">="}, {"to", "结束日期", q.To, "<="},
	} {
		if f.v == "" {
			continue
		}
		if !validDate(f.v) {
			return nil, badQuery(f.field, "%s“%s”格式不对，应为 YYYY-MM-DD，例如 2024-03-05", f.label, clip(f.v))
		}
		p.where = append(p.where, "d.date "+f.op+" ? AND d.date <> ''")
		p.args = append(p.args, f.v)
	}
	if q.From != "" && q.To != "" && q.From > q.To {
		return nil, badQuery("from", "起始日期 %s 晚于结束日期 %s", q.From, q.To)
	}
	switch {
	case q.Limit < 0:
		return nil, badQuery("limit", "每页条数不能为负数")
	case q.Limit == 0:
		p.limit = DefaultLimit
	case q.Limit > MaxLimit:
		p.limit = MaxLimit
	}
	if q.Offset < 0 {
		return nil, badQuery("offset", "起始位置不能为负数")
	}
	return p, nil
}

// checkText refuses invalid UTF-8, control characters and overlong values.
func checkText(field, label, s string) error {
	if !utf8.ValidString(s) {
		return badQuery(field, "%s不是有效的 UTF-8 文本", label)
	}
	n := 0
	for _, r := range s {
		n++
		if unicode.IsControl(r) {
			return badQuery(field, "%s含有控制字符（第 %d 个字符，U+%04X），请删除后重试", label, n, r)
		}
	}
	if n > MaxQueryRunes {
		return badQuery(field, "%s过长：%d 个字符，最多 %d 个", label, n, MaxQueryRunes)
	}
	return nil
}

// clip shortens a value quoted back to the user.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 20 {
		return s
	}
	return string([]rune(s)[:20]) + "…"
}

// Column weights for bm25(), in the order of the text table's columns:
// title (single characters, pairs), body (same), 文号 (same).
const bm25Weights = "10.0, 10.0, 1.0, 1.0, 8.0, 8.0"

// Search runs q. A query it refuses returns an error wrapping ErrBadQuery.
func (x *Index) Search(ctx context.Context, q Query) (*Result, error) {
	p, err := check(q)
	if err != nil {
		return nil, err
	}
	where := ""
	if len(p.where) > 0 {
		where = " AND " + strings.Join(p.where, " AND ")
	}
	var rankSQL, countSQL string
	var args []any // shared by both, before LIMIT and OFFSET
	if p.match == "" {
		order := "d.date DESC, d.rid"
		if x.reversed {
			order = "d.date, d.rid DESC"
		}
		rankSQL = `SELECT d.rid, 0.0, 0 FROM doc d WHERE 1` + where + ` ORDER BY ` + order
		countSQL = `SELECT count(*) FROM doc d WHERE 1` + where
		args = p.args
	} else {
		// The documents whose whole 文号 is the query (almost always none
		// or one) rank first; looking them up first keeps that test off
		// the per-match path.
		exact, err := x.docNoMatches(ctx, p.docNoKey)
		if err != nil {
			return nil, err
		}
		exactExpr := "0"
		if len(exact) > 0 {
			exactExpr = "text.rowid IN (" + strings.Repeat("?,", len(exact)-1) + "?)"
		}
		from := `text`
		if where != "" {
			from = `text JOIN doc d ON d.rid = text.rowid`
		}
		order := "exact DESC, score DESC, text.rowid"
		if x.reversed {
			order = "exact, score, text.rowid DESC"
		}
		rankSQL = `SELECT text.rowid, -bm25(text, ` + bm25Weights + `) AS score, ` + exactExpr + ` AS exact
			FROM ` + from + ` WHERE text MATCH ?` + where + ` ORDER BY ` + order
		countSQL = `SELECT count(*) FROM ` + from + ` WHERE text MATCH ?` + where
		args = append(args, p.match)
		args = append(args, p.args...)
		if len(exact) > 0 {
			// The IN list comes first in the ranking statement.
			rargs := append(exact, args...)
			return x.run(ctx, p, rankSQL, rargs, countSQL, args)
		}
	}
	return x.run(ctx, p, rankSQL, args, countSQL, args)
}

// docNoMatches lists the documents whose normalized 文号 is key.
func (x *Index) docNoMatches(ctx context.Context, key string) ([]any, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT rid FROM doc WHERE doc_no_key = ? AND doc_no_key <> ''`, key)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []any
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out = append(out, rid)
	}
	return out, rows.Err()
}

// run counts the hits, fetches one ranked page and hydrates it.
func (x *Index) run(ctx context.Context, p *plan, rankSQL string, rankArgs []any, countSQL string, countArgs []any) (*Result, error) {
	res := &Result{}
	if err := x.db.QueryRowContext(ctx, countSQL, countArgs...).Scan(&res.Total); err != nil {
		return nil, fmt.Errorf("search: count: %w", err)
	}
	if res.Total == 0 || p.offset >= res.Total {
		return res, nil
	}
	rows, err := x.db.QueryContext(ctx, rankSQL+` LIMIT ? OFFSET ?`, append(rankArgs, p.limit, p.offset)...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var rids []int64
	for rows.Next() {
		var h Hit
		var rid int64
		if err := rows.Scan(&rid, &h.Score, &h.DocNoMatch); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		rids = append(rids, rid)
		res.Hits = append(res.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	rows.Close()
	if err := x.hydrate(ctx, p, rids, res.Hits); err != nil {
		return nil, err
	}
	return res, nil
}

// hydrate fills the stored fields, snippets and highlights of hits.
func (x *Index) hydrate(ctx context.Context, p *plan, rids []int64, hits []Hit) error {
	if len(rids) == 0 {
		return nil
	}
	pos := make(map[int64]int, len(rids))
	marks := make([]string, len(rids))
	args := make([]any, len(rids))
	for i, r := range rids {
		pos[r] = i
		marks[i] = "?"
		args[i] = r
	}
	rows, err := x.db.QueryContext(ctx, `SELECT d.rid, d.id, d.revision, d.title, d.dept_code, d.dept_name, d.channel,
		d.publisher, d.doc_no, d.date, d.url, b.body FROM doc d JOIN body b ON b.rid = d.rid
		WHERE d.rid IN (`+strings.Join(marks, ",")+`)`, args...)
	if err != nil {
		return fmt.Errorf("search: hydrate: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var body string
		var h Hit
		if err := rows.Scan(&rid, &h.ID, &h.Revision, &h.Title, &h.DeptCode, &h.DeptName, &h.Channel,
			&h.Publisher, &h.DocNo, &h.Date, &h.URL, &body); err != nil {
			return fmt.Errorf("search: hydrate: %w", err)
		}
		i := pos[rid]
		h.Score, h.DocNoMatch = hits[i].Score, hits[i].DocNoMatch
		h.TitleHighlights = spans(h.Title, p.terms)
		h.Snippet, h.Highlights = snippet(body, p.terms)
		hits[i] = h
	}
	return rows.Err()
}
