package store

import (
	"context"
	"encoding/json"
	"fmt"
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
		active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (adapter_id, site_id, column_id) DO UPDATE SET column_name = excluded.column_name,
			column_path = excluded.column_path, admin_level = excluded.admin_level,
			topic_tags = excluded.topic_tags, post_count = excluded.post_count,
			last_seen_at = excluded.last_seen_at,
			subscribed_target_id = COALESCE(excluded.subscribed_target_id, master_column_registry.subscribed_target_id),
			active = excluded.active, updated_at = excluded.updated_at`,
		c.AdapterID, c.SiteID, c.ColumnID, c.ColumnName, nullStr(c.ColumnPath), c.AdminLevel, string(tj),
		c.PostCount, s.ts(c.LastSeenAt), c.SubscribedTargetID, true, s.ts(now), s.ts(now))
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

// ColumnFilter selects registry rows for ListColumns; zero fields select all.
type ColumnFilter struct {
	Tag              string // a normalised topic tag
	AdminLevel       string // city | county | township
	UnsubscribedOnly bool
	ActiveOnly       bool
}

// ListColumns searches the column registry across sites,
// ordered by site and column. The tag lookup uses the GIN index on
// PostgreSQL and the master_column_topic side table on SQLite.
func (s *Store) ListColumns(ctx context.Context, f ColumnFilter) ([]model.ColumnRegistry, error) {
	query := `SELECT r.id, r.adapter_id, r.site_id, r.column_id, r.column_name, r.column_path, r.admin_level,
		r.topic_tags, r.post_count, r.last_seen_at, r.subscribed_target_id, r.active, r.created_at, r.updated_at
		FROM master_column_registry r WHERE 1 = 1`
	var args []any
	if f.Tag != "" {
		tag, _ := json.Marshal([]string{f.Tag})
		switch s.dialect {
		case DialectPostgres:
			query += ` AND r.topic_tags @> ?::jsonb`
			args = append(args, string(tag))
		default:
			query += ` AND r.id IN (SELECT registry_id FROM master_column_topic WHERE tag = ?)`
			args = append(args, f.Tag)
		}
	}
	if f.AdminLevel != "" {
		query += ` AND r.admin_level = ?`
		args = append(args, f.AdminLevel)
	}
	if f.UnsubscribedOnly {
		query += ` AND r.subscribed_target_id IS NULL`
	}
	if f.ActiveOnly {
		query += ` AND r.active = ?`
		args = append(args, true)
	}
	query += ` ORDER BY r.site_id, r.column_id`
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	defer rows.Close()
	var out []model.ColumnRegistry
	for rows.Next() {
		var c model.ColumnRegistry
		var tags json.RawMessage
		err := rows.Scan(&c.ID, &c.AdapterID, &c.SiteID, &c.ColumnID, &c.ColumnName, strCol{&c.ColumnPath},
			&c.AdminLevel, jsonCol{&tags}, &c.PostCount, timeCol{&c.LastSeenAt}, &c.SubscribedTargetID,
			&c.Active, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt})
		if err != nil {
			return nil, fmt.Errorf("list columns: %w", err)
		}
		if err := json.Unmarshal(tags, &c.TopicTags); err != nil {
			return nil, fmt.Errorf("list columns: topic_tags of %d: %w", c.ID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	return out, nil
}
