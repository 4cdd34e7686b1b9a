package store

import (
	"context"
	"fmt"
	"strings"

	"zhizhi/internal/model"
)

// ArticleQuery selects articles for people and the API: the filters RAG
// users search by (local department, channel path, the public attributes,
// external references) and a keyset page. Empty fields do not filter.
type ArticleQuery struct {
	DeptID      *int64
	ChannelPath string // a substring of channel_path
	Publisher   string // publisher, exactly
	TopicWord   string // a substring of topic_words
	DocNo       string // doc_no, exactly
	// ExternalRef keeps only articles of the provincial and national
	// reference sites that belong to no local department.
	ExternalRef bool
	Status      string
	DateFrom    string // publish_date on or after, YYYY-MM-DD
	DateTo      string // publish_date on or before, YYYY-MM-DD
	SiteID      *int64
	TargetID    *int64
	NotExported bool // exported_to_rag_at is not set
	// BeforeID continues a page: only articles with a smaller id. Pages run
	// newest first by id, which never changes, so an article stored while
	// someone pages comes before their first page and never shifts the rest.
	BeforeID int64
	Limit    int // default 50, at most 500
}

// Bounds of ArticleQuery.Limit and CrawlLogQuery.Limit.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// articleListColumns are articleColumns without the body text, which a
// list never shows and which is the bulk of a row.
var articleListColumns = strings.Replace(articleColumns, "a.content_text", "NULL", 1)

// QueryArticles returns one page of articles, newest first, without their
// content_text and attachments (ArticleByID has both).
func (s *Store) QueryArticles(ctx context.Context, q ArticleQuery) ([]model.Article, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v ...any) { where, args = append(where, cond), append(args, v...) }
	if q.DeptID != nil {
		add("a.dept_id = ?", *q.DeptID)
	}
	if q.ChannelPath != "" {
		add(s.contains("a.channel_path"), q.ChannelPath)
	}
	if q.Publisher != "" {
		add("a.publisher = ?", q.Publisher)
	}
	if q.TopicWord != "" {
		add(s.contains("a.topic_words"), q.TopicWord)
	}
	if q.DocNo != "" {
		add("a.doc_no = ?", q.DocNo)
	}
	if q.ExternalRef {
		add("a.dept_id IS NULL AND s.site_role IN (?, ?)", model.RoleProvinceRef, model.RoleNationRef)
	}
	if q.Status != "" {
		add("a.status = ?", q.Status)
	}
	if q.DateFrom != "" {
		add("a.publish_date >= ?", q.DateFrom)
	}
	if q.DateTo != "" {
		add("a.publish_date <= ?", q.DateTo)
	}
	if q.SiteID != nil {
		add("a.site_id = ?", *q.SiteID)
	}
	if q.TargetID != nil {
		add("a.target_id = ?", *q.TargetID)
	}
	if q.NotExported {
		add("a.exported_to_rag_at IS NULL")
	}
	if q.BeforeID > 0 {
		add("a.id < ?", q.BeforeID)
	}
	query := `SELECT ` + articleListColumns + ` FROM article a JOIN crawl_site s ON s.id = a.site_id`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY a.id DESC LIMIT ?`
	args = append(args, pageLimit(q.Limit))
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query articles: %w", err)
	}
	defer rows.Close()
	out := []model.Article{}
	for rows.Next() {
		a, err := scanArticle(rows)
		if err != nil {
			return nil, fmt.Errorf("query articles: %w", err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query articles: %w", err)
	}
	return out, nil
}

// contains is a condition "column contains the parameter as a substring",
// taken literally (no LIKE wildcards) and case-sensitively on both dialects.
func (s *Store) contains(column string) string {
	if s.dialect == DialectPostgres {
		return "strpos(" + column + ", ?) > 0"
	}
	return "instr(" + column + ", ?) > 0"
}

func pageLimit(n int) int {
	if n <= 0 {
		return DefaultPageLimit
	}
	return min(n, MaxPageLimit)
}
