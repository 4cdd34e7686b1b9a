package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/model"
)

// ErrBadCursor is returned for an export cursor this store did not issue.
var ErrBadCursor = errors.New("invalid export cursor")

// ExportFilter selects articles for the RAG export.
type ExportFilter struct {
	SinceCursor string // from a previous page; empty starts at the beginning
	Status      string // default ready: RAG reads only ready articles
	DeptID      *int64
	Category    string // content_category
	SiteRole    string
	Limit       int // default 100, at most 1000
}

const (
	defaultExportLimit = 100
	maxExportLimit     = 1000
)

// ExportArticles returns one page of articles in (updated_at, id) order,
// with their attachments, and the cursor to pass for the next page. The
// order is stable: an article that changes gets a new updated_at and comes
// again after the pages already read, so following the cursor never misses
// a change. next is the cursor after the last row (or SinceCursor when the
// page is empty); a page shorter than the limit means "caught up for now".
func (s *Store) ExportArticles(ctx context.Context, f ExportFilter) (rows []model.Article, next string, err error) {
	if f.Status == "" {
		f.Status = model.StatusReady
	}
	if f.Limit <= 0 {
		f.Limit = defaultExportLimit
	}
	if f.Limit > maxExportLimit {
		f.Limit = maxExportLimit
	}
	query := `SELECT ` + articleColumns + ` FROM article a JOIN crawl_site s ON s.id = a.site_id WHERE a.status = ?`
	args := []any{f.Status}
	if f.SinceCursor != "" {
		at, id, err := decodeCursor(f.SinceCursor)
		if err != nil {
			return nil, "", fmt.Errorf("export articles: %w", err)
		}
		query += ` AND (a.updated_at > ? OR (a.updated_at = ? AND a.id > ?))`
		args = append(args, s.ts(at), s.ts(at), id)
	}
	if f.DeptID != nil {
		query += ` AND a.dept_id = ?`
		args = append(args, *f.DeptID)
	}
	if f.Category != "" {
		query += ` AND a.content_category = ?`
		args = append(args, f.Category)
	}
	if f.SiteRole != "" {
		query += ` AND s.site_role = ?`
		args = append(args, f.SiteRole)
	}
	query += ` ORDER BY a.updated_at, a.id LIMIT ?`
	args = append(args, f.Limit)

	r, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("export articles: %w", err)
	}
	defer r.Close()
	var ids []int64
	for r.Next() {
		a, err := scanArticle(r)
		if err != nil {
			return nil, "", fmt.Errorf("export articles: %w", err)
		}
		rows = append(rows, *a)
		ids = append(ids, a.ID)
	}
	if err := r.Err(); err != nil {
		return nil, "", fmt.Errorf("export articles: %w", err)
	}
	r.Close()
	atts, err := s.attachments(ctx, ids)
	if err != nil {
		return nil, "", fmt.Errorf("export articles: %w", err)
	}
	for i := range rows {
		rows[i].Attachments = atts[rows[i].ID]
	}
	if len(rows) == 0 {
		return rows, f.SinceCursor, nil
	}
	last := rows[len(rows)-1]
	return rows, encodeCursor(last.UpdatedAt, last.ID), nil
}

// MarkExported stamps exported_to_rag_at on the given articles. It does not
// move updated_at, so marking never reorders the export.
func (s *Store) MarkExported(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{s.ts(at)}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.conn().exec(ctx, `UPDATE article SET exported_to_rag_at = ? WHERE id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return fmt.Errorf("mark exported: %w", err)
	}
	return nil
}

// A cursor is "v1|<updated_at unix microseconds>|<id>" in URL-safe base64:
// opaque to clients, exact to the microsecond both dialects keep.
func encodeCursor(at time.Time, id int64) string {
	raw := "v1|" + strconv.FormatInt(at.UTC().UnixMicro(), 10) + "|" + strconv.FormatInt(id, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ValidExportCursor reports whether c has the shape of a cursor
// ExportArticles issues, so a command can refuse a mistyped --since before
// it opens the database.
func ValidExportCursor(c string) bool {
	_, _, err := decodeCursor(c)
	return err == nil
}

func decodeCursor(c string) (time.Time, int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, 0, ErrBadCursor
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 3 || parts[0] != "v1" {
		return time.Time{}, 0, ErrBadCursor
	}
	us, err1 := strconv.ParseInt(parts[1], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, ErrBadCursor
	}
	return time.UnixMicro(us).UTC(), id, nil
}
