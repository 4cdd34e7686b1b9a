package api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/pages"
	"zhizhi/internal/store"
)

// maxParamLen bounds a free-text query parameter.
const maxParamLen = 200

// query reads a request's query parameters. Each getter takes one
// parameter and checks it; check then reports the first problem, including
// any parameter the endpoint does not take (openapi.yaml says unknown
// parameters are refused, so a misspelt filter never silently matches
// everything).
type query struct {
	v    url.Values
	used map[string]bool
	err  *apiError
}

func newQuery(r *http.Request) *query {
	return &query{v: r.URL.Query(), used: map[string]bool{}}
}

func (q *query) bad(name, format string, args ...any) {
	if q.err == nil {
		q.err = invalid("query parameter %q: %s", name, fmt.Sprintf(format, args...))
	}
}

// raw returns the single value of name, or "" when absent.
func (q *query) raw(name string) string {
	q.used[name] = true
	vals, ok := q.v[name]
	if !ok {
		return ""
	}
	if len(vals) != 1 {
		q.bad(name, "give it once, not %d times", len(vals))
		return ""
	}
	if vals[0] == "" {
		q.bad(name, "empty; leave it out or give a value")
	}
	if !pages.PlainText(vals[0], false) {
		q.bad(name, "holds a control character or invalid UTF-8; remove it")
		return ""
	}
	return vals[0]
}

// text is a free-text filter of at most maxParamLen characters.
func (q *query) text(name string) string {
	s := q.raw(name)
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxParamLen {
		q.bad(name, "at most %d characters of UTF-8 text", maxParamLen)
		return ""
	}
	return s
}

// id is a positive whole number, or nil when absent.
func (q *query) id(name string) *int64 {
	s := q.raw(name)
	if s == "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		q.bad(name, "%q is not an id (a whole number from 1)", s)
		return nil
	}
	return &n
}

// oneOf is one of the allowed values, or "" when absent.
func (q *query) oneOf(name string, allowed ...string) string {
	s := q.raw(name)
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	q.bad(name, "%q is not one of %s", s, strings.Join(allowed, ", "))
	return ""
}

// boolean is true or false, or nil when absent.
func (q *query) boolean(name string) *bool {
	switch s := q.raw(name); s {
	case "":
		return nil
	case "true", "false":
		b := s == "true"
		return &b
	default:
		q.bad(name, "%q: use true or false", s)
		return nil
	}
}

// date is a calendar date YYYY-MM-DD, or "" when absent.
func (q *query) date(name string) string {
	s := q.raw(name)
	if s == "" {
		return ""
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		q.bad(name, "%q is not a date like 2026-04-23", s)
		return ""
	}
	return s
}

// instant is an RFC 3339 date-time, or nil when absent.
func (q *query) instant(name string) *time.Time {
	s := q.raw(name)
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		q.bad(name, "%q is not a date-time like 2026-04-23T08:00:00+08:00", s)
		return nil
	}
	return &t
}

// limit is the page size: 1 to store.MaxPageLimit, store.DefaultPageLimit
// when absent.
func (q *query) limit() int {
	s := q.raw("limit")
	if s == "" {
		return store.DefaultPageLimit
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > store.MaxPageLimit {
		q.bad("limit", "%q: use a whole number from 1 to %d", s, store.MaxPageLimit)
		return 0
	}
	return n
}

// cursor decodes a page cursor of kind, or 0 when absent.
func (q *query) cursor(kind string) int64 {
	s := q.raw("cursor")
	if s == "" {
		return 0
	}
	id, ok := decodePageCursor(kind, s)
	if !ok {
		q.bad("cursor", "not a cursor this endpoint issued; pass next_cursor from the previous page unchanged")
	}
	return id
}

// check reports the first bad parameter, or a parameter the endpoint does
// not take.
func (q *query) check() error {
	if q.err != nil {
		return q.err
	}
	for name := range q.v {
		if !q.used[name] {
			return invalid("query parameter %q is not one this endpoint takes; openapi.yaml lists them", name)
		}
	}
	return nil
}

// A page cursor is "<kind>|<last id>" in URL-safe base64: opaque to
// clients, and bound to its endpoint so an article cursor is refused by
// the crawl log.
func encodePageCursor(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + strconv.FormatInt(id, 10)))
}

func decodePageCursor(kind, c string) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	k, idText, ok := strings.Cut(string(raw), "|")
	if !ok || k != kind {
		return 0, false
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// pathID reads the {id} of the path: a positive whole number.
func pathID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, invalid("path: %q is not an id (a whole number from 1)", s)
	}
	return n, nil
}
