package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// The differences between SQLite and PostgreSQL live here: placeholders,
// how timestamps, dates and JSON travel, and how constraint errors look.

// tsLayout is how SQLite stores timestamps: UTC, fixed width, so that text
// order is time order and (updated_at, id) cursors compare correctly.
const tsLayout = "2006-01-02T15:04:05.000000Z"

// runner is what *sql.DB and *sql.Tx have in common.
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs statements written with ? placeholders on either dialect.
type conn struct {
	r runner
	s *Store
}

func (s *Store) conn() conn { return conn{r: s.db, s: s} }

func (c conn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.r.ExecContext(ctx, c.s.rebind(query), args...)
}

func (c conn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.r.QueryContext(ctx, c.s.rebind(query), args...)
}

func (c conn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return c.r.QueryRowContext(ctx, c.s.rebind(query), args...)
}

// insertID runs an INSERT … RETURNING id (both dialects support RETURNING).
func (c conn) insertID(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	err := c.queryRow(ctx, query+" RETURNING id", args...).Scan(&id)
	return id, err
}

// rebind turns ? placeholders into $1, $2, … for PostgreSQL. Queries in this
// package never contain a literal question mark.
func (s *Store) rebind(query string) string {
	if s.dialect != DialectPostgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// ts converts a time for a timestamp column.
func (s *Store) ts(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if s.dialect == DialectSQLite {
		return t.Format(tsLayout)
	}
	return t
}

// tsPtr is ts for a nullable column.
func (s *Store) tsPtr(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return s.ts(*t)
}

// nullStr stores an empty string as NULL; the Go side maps NULL back to "".
func nullStr(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// jsonArg stores JSON text, or NULL for an empty or null document.
func jsonArg(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return string(raw)
}

// timeCol scans a NOT NULL timestamp from either dialect.
type timeCol struct{ dst *time.Time }

func (c timeCol) Scan(src any) error {
	t, ok, err := parseTime(src)
	if err != nil {
		return err
	}
	if !ok {
		*c.dst = time.Time{}
		return nil
	}
	*c.dst = t
	return nil
}

// nullTimeCol scans a nullable timestamp.
type nullTimeCol struct{ dst **time.Time }

func (c nullTimeCol) Scan(src any) error {
	t, ok, err := parseTime(src)
	if err != nil {
		return err
	}
	if !ok {
		*c.dst = nil
		return nil
	}
	*c.dst = &t
	return nil
}

func parseTime(src any) (time.Time, bool, error) {
	switch v := src.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		return v.UTC(), true, nil
	case string:
		return parseTimeText(v)
	case []byte:
		return parseTimeText(string(v))
	}
	return time.Time{}, false, fmt.Errorf("scan timestamp: unexpected %T", src)
}

func parseTimeText(v string) (time.Time, bool, error) {
	if v == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(tsLayout, v)
	if err != nil {
		t, err = time.Parse(time.RFC3339Nano, v)
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("scan timestamp %q: %w", v, err)
	}
	return t.UTC(), true, nil
}

// strCol scans a nullable text column, NULL becoming "".
type strCol struct{ dst *string }

func (c strCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = ""
	case string:
		*c.dst = v
	case []byte:
		*c.dst = string(v)
	default:
		*c.dst = fmt.Sprint(v)
	}
	return nil
}

// dateCol scans a date (PostgreSQL date, SQLite text) as YYYY-MM-DD.
type dateCol struct{ dst *string }

func (c dateCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = ""
	case time.Time:
		*c.dst = v.Format("2006-01-02")
	case string:
		*c.dst = v
	case []byte:
		*c.dst = string(v)
	default:
		return fmt.Errorf("scan date: unexpected %T", src)
	}
	return nil
}

// jsonCol scans a JSON column; NULL becomes nil.
type jsonCol struct{ dst *json.RawMessage }

func (c jsonCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = nil
	case string:
		*c.dst = json.RawMessage(v)
	case []byte:
		*c.dst = append(json.RawMessage(nil), v...)
	default:
		return fmt.Errorf("scan json: unexpected %T", src)
	}
	return nil
}

// Kinds of constraint violation reported by ConstraintViolation.
const (
	ViolationUnique     = "unique"
	ViolationCheck      = "check"
	ViolationForeignKey = "foreign_key"
	ViolationNotNull    = "not_null"
)

// ConstraintViolation reports which kind of database rule err broke, or ""
// when err is not a constraint violation. It reads both drivers' errors.
func ConstraintViolation(err error) string {
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return ViolationUnique
		case "23514":
			return ViolationCheck
		case "23503":
			return ViolationForeignKey
		case "23502":
			return ViolationNotNull
		}
		return ""
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		// Extended result codes (sqlite3.h): SQLITE_CONSTRAINT_* = 19 | n<<8.
		switch sqErr.Code() {
		case 2067, 1555: // UNIQUE, PRIMARYKEY
			return ViolationUnique
		case 275: // CHECK
			return ViolationCheck
		case 787: // FOREIGNKEY
			return ViolationForeignKey
		case 1299: // NOTNULL
			return ViolationNotNull
		}
	}
	return ""
}

// canonicalJSON returns a comparable form of a JSON document: keys sorted,
// white space removed, numbers kept as written. PostgreSQL's jsonb rewrites
// documents, so stored and new JSON are compared in this form.
func canonicalJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	if v == nil {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}
