package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"zhizhi/internal/model"
)

// UpsertColumnRegistry records a column seen in a CMS listing,
// keyed by (adapter_id, site_id, column_id), and sets c.ID. A seen
// column is active again; the column name is stored without trailing
// spaces; a nil SubscribedTargetID keeps the stored subscription.
func (s *Store) UpsertColumnRegistry(ctx context.Context, c *model.ColumnRegistry) error {
	c.ColumnName = strings.TrimSpace(c.ColumnName)
	tags := c.TopicTags
	if tags == nil {
		tags = []string{}
	}
	tj, err := json.Marshal(tags)
	if err != nil {
		return fmt.Errorf("upsert column %s: %w", c.ColumnID, err)
	}
	now := s.now()
	if c.LastSeenAt.IsZero() {
		c.LastSeenAt = now
	}
	c.Active = true
	id, err := s.conn().insertID(ctx, `INSERT INTO master_column_registry (adapter_id, site_id, column_id,
		column_name, column_path, admin_level, topic_tags, post_count, last_seen_at, subscribed_target_id,
		active, created_at, updated_at, site_department_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (adapter_id, site_id, column_id) DO UPDATE SET column_name = excluded.column_name,
			column_path = excluded.column_path, admin_level = excluded.admin_level,
			topic_tags = excluded.topic_tags, post_count = excluded.post_count,
			last_seen_at = excluded.last_seen_at,
			subscribed_target_id = COALESCE(excluded.subscribed_target_id, master_column_registry.subscribed_target_id),
			active = excluded.active, updated_at = excluded.updated_at,
			site_department_id = COALESCE(excluded.site_department_id, master_column_registry.site_department_id)`,
		c.AdapterID, c.SiteID, c.ColumnID, c.ColumnName, nullStr(c.ColumnPath), c.AdminLevel, string(tj),
		c.PostCount, s.ts(c.LastSeenAt), c.SubscribedTargetID, true, s.ts(now), s.ts(now), c.SiteDepartmentID)
	if err != nil {
		return fmt.Errorf("upsert column %s of site %d: %w", c.ColumnID, c.SiteID, err)
	}
	c.ID = id
	return nil
}

// DeactivateColumnsExcept marks inactive every active column of the adapter
// on the site whose column_id is not in keep: a column gone from the CMS
// keeps its row and history.
func (s *Store) DeactivateColumnsExcept(ctx context.Context, adapterID string, siteID int64, keep []string) (int, error) {
	query := `UPDATE master_column_registry SET active = ?, updated_at = ?
		WHERE adapter_id = ? AND site_id = ? AND active = ?`
	args := []any{false, s.ts(s.now()), adapterID, siteID, true}
	if len(keep) > 0 {
		query += ` AND column_id NOT IN (` + placeholders(len(keep)) + `)`
		for _, k := range keep {
			args = append(args, k)
		}
	}
	res, err := s.conn().exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("deactivate columns of site %d: %w", siteID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deactivate columns of site %d: %w", siteID, err)
	}
	return int(n), nil
}

// ColumnFilter selects registry rows for the column catalog; zero fields
// select all. A column is subscribed while a target made from it is
// enabled: an unsubscribed column's target is only disabled, so its
// history stays.
type ColumnFilter struct {
	Tag              string // a normalised topic tag
	AdminLevel       string // city | county | township
	SubscribedOnly   bool
	UnsubscribedOnly bool
	ActiveOnly       bool
	Site             string // site_code or site_name contains this, in any case
	SiteID           int64
	AdapterID        string
	Limit            int // 0: all
	Offset           int
}

// ColumnEntry is one row of the column catalog: the registry row with its
// site and the target subscribed from it, if any.
type ColumnEntry struct {
	model.ColumnRegistry
	SiteCode      string
	SiteName      string
	DeptPath      string // of the site department that listed it; empty if not known
	TargetCode    string // the subscribed target, empty if none
	TargetEnabled bool
}

// Subscribed reports whether the column is being crawled.
func (e ColumnEntry) Subscribed() bool { return e.TargetCode != "" && e.TargetEnabled }

// TagCount is one tag of the catalog's tag cloud.
type TagCount struct {
	Tag   string
	Count int
}

const columnEntryColumns = `r.id, r.adapter_id, r.site_id, r.site_department_id, r.column_id, r.column_name,
	r.column_path, r.admin_level, r.topic_tags, r.post_count, r.last_seen_at, r.subscribed_target_id, r.active,
	r.created_at, r.updated_at, s.site_code, s.site_name, d.dept_path, t.target_code, t.enabled`

const columnEntryFrom = ` FROM master_column_registry r
	JOIN crawl_site s ON s.id = r.site_id
	LEFT JOIN site_department d ON d.id = r.site_department_id
	LEFT JOIN crawl_target t ON t.id = r.subscribed_target_id`

// columnWhere turns f into SQL conditions over columnEntryFrom.
func (s *Store) columnWhere(f ColumnFilter) (string, []any) {
	where := ` WHERE 1 = 1`
	var args []any
	if f.Tag != "" {
		switch s.dialect {
		case DialectPostgres:
			tag, _ := json.Marshal([]string{f.Tag})
			where += ` AND r.topic_tags @> ?::jsonb`
			args = append(args, string(tag))
		default:
			where += ` AND r.id IN (SELECT registry_id FROM master_column_topic WHERE tag = ?)`
			args = append(args, f.Tag)
		}
	}
	if f.AdminLevel != "" {
		where += ` AND r.admin_level = ?`
		args = append(args, f.AdminLevel)
	}
	if f.SubscribedOnly {
		where += ` AND t.enabled = ?`
		args = append(args, true)
	}
	if f.UnsubscribedOnly {
		where += ` AND (t.id IS NULL OR t.enabled = ?)`
		args = append(args, false)
	}
	if f.ActiveOnly {
		where += ` AND r.active = ?`
		args = append(args, true)
	}
	if q := strings.TrimSpace(f.Site); q != "" {
		like := "%" + likeEscaper.Replace(strings.ToLower(q)) + "%"
		where += ` AND (LOWER(s.site_code) LIKE ? ESCAPE '\' OR LOWER(s.site_name) LIKE ? ESCAPE '\')`
		args = append(args, like, like)
	}
	if f.SiteID != 0 {
		where += ` AND r.site_id = ?`
		args = append(args, f.SiteID)
	}
	if f.AdapterID != "" {
		where += ` AND r.adapter_id = ?`
		args = append(args, f.AdapterID)
	}
	return where, args
}

// likeEscaper makes a search text match itself in LIKE, % and _ included.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ListColumns searches the column registry across sites, ordered by site
// and column. The tag lookup uses the GIN index on PostgreSQL and the
// master_column_topic side table on SQLite.
func (s *Store) ListColumns(ctx context.Context, f ColumnFilter) ([]model.ColumnRegistry, error) {
	entries, err := s.ListColumnEntries(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []model.ColumnRegistry
	for _, e := range entries {
		out = append(out, e.ColumnRegistry)
	}
	return out, nil
}

// ListColumnEntries is ListColumns with each column's site and subscribed
// target, one page of f.Limit rows from f.Offset.
func (s *Store) ListColumnEntries(ctx context.Context, f ColumnFilter) ([]ColumnEntry, error) {
	where, args := s.columnWhere(f)
	query := `SELECT ` + columnEntryColumns + columnEntryFrom + where + ` ORDER BY s.site_code, r.column_id, r.id`
	if f.Limit > 0 {
		query += ` LIMIT ? OFFSET ?`
		args = append(args, f.Limit, max(f.Offset, 0))
	}
	return s.scanColumnEntries(ctx, s.conn(), query, args...)
}

// CountColumns counts the rows ListColumnEntries would return without a
// limit.
func (s *Store) CountColumns(ctx context.Context, f ColumnFilter) (int, error) {
	where, args := s.columnWhere(f)
	var n int
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*)`+columnEntryFrom+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count columns: %w", err)
	}
	return n, nil
}

// ColumnTagCounts counts, for every topic tag, the columns matching f that
// carry it: the tag cloud. Most used first, then by tag.
func (s *Store) ColumnTagCounts(ctx context.Context, f ColumnFilter) ([]TagCount, error) {
	f.Limit, f.Offset = 0, 0
	where, args := s.columnWhere(f)
	var query string
	switch s.dialect {
	case DialectPostgres:
		query = `SELECT tg.tag, COUNT(*)` + columnEntryFrom +
			` CROSS JOIN LATERAL jsonb_array_elements_text(r.topic_tags) AS tg(tag)` + where +
			` GROUP BY tg.tag ORDER BY COUNT(*) DESC, tg.tag`
	default:
		query = `SELECT tg.tag, COUNT(*)` + columnEntryFrom +
			` JOIN master_column_topic tg ON tg.registry_id = r.id` + where +
			` GROUP BY tg.tag ORDER BY COUNT(*) DESC, tg.tag`
	}
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("column tag counts: %w", err)
	}
	defer rows.Close()
	var out []TagCount
	for rows.Next() {
		var tc TagCount
		if err := rows.Scan(&tc.Tag, &tc.Count); err != nil {
			return nil, fmt.Errorf("column tag counts: %w", err)
		}
		out = append(out, tc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("column tag counts: %w", err)
	}
	// Ties by tag in byte order, the same on both dialects whatever the
	// server's collation.
	slices.SortStableFunc(out, func(a, b TagCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Tag, b.Tag))
	})
	return out, nil
}

// ColumnEntryByID returns one catalog row, or ErrNotFound.
func (s *Store) ColumnEntryByID(ctx context.Context, id int64) (*ColumnEntry, error) {
	return s.columnEntryByID(ctx, s.conn(), id)
}

// ColumnEntryByID returns one catalog row inside the transaction, or
// ErrNotFound.
func (t *Tx) ColumnEntryByID(ctx context.Context, id int64) (*ColumnEntry, error) {
	return t.s.columnEntryByID(ctx, t.c, id)
}

func (s *Store) columnEntryByID(ctx context.Context, c conn, id int64) (*ColumnEntry, error) {
	entries, err := s.scanColumnEntries(ctx, c, `SELECT `+columnEntryColumns+columnEntryFrom+` WHERE r.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("column registry %d: %w", id, ErrNotFound)
	}
	return &entries[0], nil
}

// SetColumnSubscription records that the target was made from the column.
func (t *Tx) SetColumnSubscription(ctx context.Context, registryID, targetID int64) error {
	if _, err := t.c.exec(ctx, `UPDATE master_column_registry SET subscribed_target_id = ?, updated_at = ? WHERE id = ?`,
		targetID, t.s.ts(t.s.now()), registryID); err != nil {
		return fmt.Errorf("subscribe column %d: %w", registryID, err)
	}
	return nil
}

func (s *Store) scanColumnEntries(ctx context.Context, c conn, query string, args ...any) ([]ColumnEntry, error) {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	defer rows.Close()
	var out []ColumnEntry
	for rows.Next() {
		var (
			e       ColumnEntry
			tags    json.RawMessage
			enabled *bool
		)
		c := &e.ColumnRegistry
		err := rows.Scan(&c.ID, &c.AdapterID, &c.SiteID, &c.SiteDepartmentID, &c.ColumnID, &c.ColumnName,
			strCol{&c.ColumnPath}, &c.AdminLevel, jsonCol{&tags}, &c.PostCount, timeCol{&c.LastSeenAt},
			&c.SubscribedTargetID, &c.Active, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt},
			&e.SiteCode, &e.SiteName, strCol{&e.DeptPath}, strCol{&e.TargetCode}, &enabled)
		if err != nil {
			return nil, fmt.Errorf("list columns: %w", err)
		}
		if err := json.Unmarshal(tags, &c.TopicTags); err != nil {
			return nil, fmt.Errorf("list columns: topic_tags of %d: %w", c.ID, err)
		}
		e.TargetEnabled = enabled != nil && *enabled
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	return out, nil
}
