package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// APIKey is a key a program uses for the API, acting for the user who owns
// it. The key itself is never stored, only its SHA-256 (hex); Prefix, its
// first characters, lets a person tell their keys apart.
type APIKey struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	Username   string     `json:"username"` // filled by reads
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

const apiKeyCols = `k.id, k.user_id, u.username, k.name, k.prefix, k.scopes, k.created_at, k.last_used_at, k.expires_at, k.revoked_at`

func apiKeyDest(k *APIKey, scopes *string) []any {
	return []any{&k.ID, &k.UserID, &k.Username, &k.Name, &k.Prefix, scopes, timeCol{&k.CreatedAt},
		nullTimeCol{&k.LastUsedAt}, nullTimeCol{&k.ExpiresAt}, nullTimeCol{&k.RevokedAt}}
}

func splitScopes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// InsertAPIKey adds k, stored under keyHash, and sets its ID and CreatedAt.
func (t *Tx) InsertAPIKey(ctx context.Context, k *APIKey, keyHash string) error {
	now := t.s.now()
	id, err := t.c.insertID(ctx, `INSERT INTO api_key (user_id, name, prefix, key_hash, scopes, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, k.UserID, k.Name, k.Prefix, keyHash, strings.Join(k.Scopes, ","),
		t.s.ts(now), t.s.tsPtr(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert api key %q: %w", k.Name, err)
	}
	k.ID, k.CreatedAt = id, now
	return nil
}

// APIKeyByHash returns the key that hashes to keyHash and its owner, or
// ErrNotFound. Whether it is still good (revoked, expired, a disabled
// owner) is the caller's rule.
func (s *Store) APIKeyByHash(ctx context.Context, keyHash string) (*APIKey, *User, error) {
	var (
		k      APIKey
		u      User
		scopes string
	)
	err := s.conn().queryRow(ctx, `SELECT `+apiKeyCols+`, `+userCols+`
		FROM api_key k JOIN app_user u ON u.id = k.user_id WHERE k.key_hash = ?`, keyHash).
		Scan(append(apiKeyDest(&k, &scopes), userDest(&u)...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("api key: %w", notFound(err))
	}
	k.Scopes = splitScopes(scopes)
	return &k, &u, nil
}

// APIKeyForUpdate returns key id inside a transaction that is about to
// change it, or ErrNotFound.
func (t *Tx) APIKeyForUpdate(ctx context.Context, id int64) (*APIKey, error) {
	q := `SELECT ` + apiKeyCols + ` FROM api_key k JOIN app_user u ON u.id = k.user_id WHERE k.id = ?`
	if t.s.dialect == DialectPostgres {
		q += ` FOR UPDATE OF k`
	}
	var (
		k      APIKey
		scopes string
	)
	if err := t.c.queryRow(ctx, q, id).Scan(apiKeyDest(&k, &scopes)...); err != nil {
		return nil, fmt.Errorf("api key %d: %w", id, notFound(err))
	}
	k.Scopes = splitScopes(scopes)
	return &k, nil
}

// ListAPIKeys returns the keys of one user (userID > 0) or of everyone,
// oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, userID int64) ([]APIKey, error) {
	q := `SELECT ` + apiKeyCols + ` FROM api_key k JOIN app_user u ON u.id = k.user_id`
	var args []any
	if userID > 0 {
		q, args = q+` WHERE k.user_id = ?`, append(args, userID)
	}
	rows, err := s.conn().query(ctx, q+` ORDER BY k.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var out []APIKey
	for rows.Next() {
		var (
			k      APIKey
			scopes string
		)
		if err := rows.Scan(apiKeyDest(&k, &scopes)...); err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		k.Scopes = splitScopes(scopes)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

// RevokeAPIKey stamps key id revoked at at; a key already revoked keeps its
// first stamp.
func (t *Tx) RevokeAPIKey(ctx context.Context, id int64, at time.Time) error {
	if _, err := t.c.exec(ctx, `UPDATE api_key SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, t.s.ts(at), id); err != nil {
		return fmt.Errorf("revoke api key %d: %w", id, err)
	}
	return nil
}

// TouchAPIKey records that the key was used at at.
func (s *Store) TouchAPIKey(ctx context.Context, id int64, at time.Time) error {
	if _, err := s.conn().exec(ctx, `UPDATE api_key SET last_used_at = ? WHERE id = ?`, s.ts(at), id); err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}
