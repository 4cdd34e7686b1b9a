package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// PutCookies adds or replaces cookies of the pool, keyed by (host, name,
// path), in one transaction.
func (s *Store) PutCookies(ctx context.Context, cookies []model.Cookie) error {
	err := s.WithTx(ctx, func(tx *Tx) error {
		now := s.now()
		for i := range cookies {
			c := &cookies[i]
			if c.Path == "" {
				c.Path = "/"
			}
			if c.CreatedAt.IsZero() {
				c.CreatedAt = now
			}
			id, err := tx.c.insertID(ctx, `INSERT INTO cookie (site_id, host, name, value, path, source,
				expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (host, name, path) DO UPDATE SET site_id = excluded.site_id,
					value = excluded.value, source = excluded.source, expires_at = excluded.expires_at,
					created_at = excluded.created_at`,
				c.SiteID, c.Host, c.Name, c.Value, c.Path, c.Source, s.tsPtr(c.ExpiresAt), s.ts(c.CreatedAt))
			if err != nil {
				return fmt.Errorf("cookie %s on %s: %w", c.Name, c.Host, err)
			}
			c.ID = id
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put cookies: %w", err)
	}
	return nil
}

// ValidCookies returns the cookies of host that have not expired at now
// (session cookies, without expiry, are valid), ordered by name.
func (s *Store) ValidCookies(ctx context.Context, host string, now time.Time) ([]model.Cookie, error) {
	rows, err := s.conn().query(ctx, `SELECT id, site_id, host, name, value, path, source, expires_at, created_at
		FROM cookie WHERE host = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY name, path`, host, s.ts(now))
	if err != nil {
		return nil, fmt.Errorf("valid cookies of %s: %w", host, err)
	}
	defer rows.Close()
	var out []model.Cookie
	for rows.Next() {
		var c model.Cookie
		if err := rows.Scan(&c.ID, &c.SiteID, &c.Host, &c.Name, &c.Value, &c.Path, &c.Source,
			nullTimeCol{&c.ExpiresAt}, timeCol{&c.CreatedAt}); err != nil {
			return nil, fmt.Errorf("valid cookies of %s: %w", host, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("valid cookies of %s: %w", host, err)
	}
	return out, nil
}

// DeleteCookies drops every cookie of host (a challenge came back: the pool
// for that host is spent).
func (s *Store) DeleteCookies(ctx context.Context, host string) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM cookie WHERE host = ?`, host); err != nil {
		return fmt.Errorf("delete cookies of %s: %w", host, err)
	}
	return nil
}
