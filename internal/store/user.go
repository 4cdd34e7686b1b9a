package store

import (
	"context"
	"fmt"
	"time"
)

// User is a person who signs in to the console or owns API keys.
// PasswordHash is the argon2id hash; it never leaves the process (no JSON).
type User struct {
	ID           int64      `json:"id"`
	Username     string     `json:"username"`
	PasswordHash string     `json:"-"`
	Role         string     `json:"role"` // viewer, operator or admin
	Disabled     bool       `json:"disabled"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	LastLoginAt  *time.Time `json:"last_login_at,omitempty"`
}

const userCols = `u.id, u.username, u.password_hash, u.role, u.disabled, u.created_at, u.updated_at, u.last_login_at`

func userDest(u *User) []any {
	return []any{&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled,
		timeCol{&u.CreatedAt}, timeCol{&u.UpdatedAt}, nullTimeCol{&u.LastLoginAt}}
}

// InsertUser adds u and sets its ID and stamps. A taken username is a
// unique violation (see ConstraintViolation).
func (t *Tx) InsertUser(ctx context.Context, u *User) error {
	now := t.s.now()
	id, err := t.c.insertID(ctx, `INSERT INTO app_user (username, password_hash, role, disabled, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, u.Username, u.PasswordHash, u.Role, u.Disabled, t.s.ts(now), t.s.ts(now))
	if err != nil {
		return fmt.Errorf("insert user %s: %w", u.Username, err)
	}
	u.ID, u.CreatedAt, u.UpdatedAt = id, now, now
	return nil
}

// UserByName returns the user called username, or ErrNotFound.
func (s *Store) UserByName(ctx context.Context, username string) (*User, error) {
	return s.conn().userByName(ctx, username, false)
}

// UserByNameForUpdate is UserByName inside a transaction that is about to
// change the user; on PostgreSQL the row stays locked until it ends.
func (t *Tx) UserByNameForUpdate(ctx context.Context, username string) (*User, error) {
	return t.c.userByName(ctx, username, true)
}

func (c conn) userByName(ctx context.Context, username string, lock bool) (*User, error) {
	q := `SELECT ` + userCols + ` FROM app_user u WHERE u.username = ?`
	if lock && c.s.dialect == DialectPostgres {
		q += ` FOR UPDATE`
	}
	var u User
	if err := c.queryRow(ctx, q, username).Scan(userDest(&u)...); err != nil {
		return nil, fmt.Errorf("user %s: %w", username, notFound(err))
	}
	return &u, nil
}

// ListUsers returns every user, by username.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.conn().query(ctx, `SELECT `+userCols+` FROM app_user u ORDER BY u.username`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		if err := rows.Scan(userDest(&u)...); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// UpdateUser writes u's password hash, role and disabled flag and stamps
// updated_at.
func (t *Tx) UpdateUser(ctx context.Context, u *User) error {
	now := t.s.now()
	res, err := t.c.exec(ctx, `UPDATE app_user SET password_hash = ?, role = ?, disabled = ?, updated_at = ? WHERE id = ?`,
		u.PasswordHash, u.Role, u.Disabled, t.s.ts(now), u.ID)
	if err != nil {
		return fmt.Errorf("update user %s: %w", u.Username, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("update user %s: %w", u.Username, ErrNotFound)
	}
	u.UpdatedAt = now
	return nil
}

// SetUserLastLogin stamps a successful sign-in.
func (t *Tx) SetUserLastLogin(ctx context.Context, userID int64, at time.Time) error {
	if _, err := t.c.exec(ctx, `UPDATE app_user SET last_login_at = ? WHERE id = ?`, t.s.ts(at), userID); err != nil {
		return fmt.Errorf("stamp last login: %w", err)
	}
	return nil
}
