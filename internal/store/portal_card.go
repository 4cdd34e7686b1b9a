package store

import (
	"context"
	"database/sql"
	"fmt"
)

// CardFacet is one choice of the portal's filters — a department or a
// channel — with how many public cards it has.
type CardFacet struct {
	ID    int64 // departments only
	Name  string
	Cards int
}

// maxFacets bounds each filter list; the busiest come first.
const maxFacets = 200

// PortalFacets returns the departments and channels that have cards the
// portal shows (no frozen card, no duplicate), busiest first.
func (s *Store) PortalFacets(ctx context.Context) (depts, channels []CardFacet, err error) {
	const public = ` FROM summary_card c JOIN article a ON a.id = c.article_id
		WHERE ` + publicCard
	rows, err := s.conn().query(ctx, `SELECT a.dept_id, d.dept_name, COUNT(*) FROM summary_card c
		JOIN article a ON a.id = c.article_id LEFT JOIN local_department d ON d.dept_id = a.dept_id
		WHERE `+publicCard+` AND a.dept_id IS NOT NULL
		GROUP BY a.dept_id, d.dept_name ORDER BY COUNT(*) DESC, a.dept_id LIMIT ?`, maxFacets)
	if err != nil {
		return nil, nil, fmt.Errorf("portal departments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f CardFacet
		var name sql.NullString
		if err := rows.Scan(&f.ID, &name, &f.Cards); err != nil {
			return nil, nil, fmt.Errorf("portal departments: %w", err)
		}
		f.Name = name.String
		depts = append(depts, f)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("portal departments: %w", err)
	}
	rows.Close()
	rows, err = s.conn().query(ctx, `SELECT a.channel_name, COUNT(*)`+public+` AND a.channel_name IS NOT NULL
		AND a.channel_name <> '' GROUP BY a.channel_name ORDER BY COUNT(*) DESC, a.channel_name LIMIT ?`, maxFacets)
	if err != nil {
		return nil, nil, fmt.Errorf("portal channels: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f CardFacet
		if err := rows.Scan(&f.Name, &f.Cards); err != nil {
			return nil, nil, fmt.Errorf("portal channels: %w", err)
		}
		channels = append(channels, f)
	}
	return depts, channels, rows.Err()
}
