package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/store"
)

// Password length rules: at least 8 characters (a passphrase is better),
// at most 1024 bytes.
const minPasswordRunes = 8

// normalizeUsername makes "Alice " and "alice" the same login.
func normalizeUsername(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// checkUsername allows 1–64 lowercase ASCII letters, digits, '.', '_' and
// '-', starting with a letter or digit: names that read the same in a log,
// an audit entry ("apikey:7(alice)") and a shell.
func checkUsername(name string) error {
	if name == "" || len(name) > 64 {
		return invalidf("username %q: use 1 to 64 characters", name)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return invalidf("username %q: use lowercase letters a-z, digits and . _ - (starting with a letter or digit)", name)
		}
	}
	return nil
}

// CheckUsername returns name as it is kept (trimmed, lowercase), or an
// ErrInvalid error saying what a username may be.
func CheckUsername(name string) (string, error) {
	n := normalizeUsername(name)
	return n, checkUsername(n)
}

func checkPassword(pw string) error {
	if utf8.RuneCountInString(pw) < minPasswordRunes {
		return invalidf("password too short: use at least %d characters", minPasswordRunes)
	}
	if len(pw) > maxPasswordBytes {
		return invalidf("password too long: use at most %d bytes", maxPasswordBytes)
	}
	return nil
}

// ParseRole reads a role name as a person types it.
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if !r.Valid() {
		return "", invalidf("role %q: use viewer, operator or admin", s)
	}
	return r, nil
}

// userView is a user as the audit trail keeps it: never the password hash.
type userView struct {
	Username string `json:"username"`
	Role     string `json:"role"`
	Disabled bool   `json:"disabled"`
}

func userJSON(u *store.User) json.RawMessage {
	b, _ := json.Marshal(userView{Username: u.Username, Role: u.Role, Disabled: u.Disabled})
	return b
}

func (s *Service) hash(password string) (string, error) {
	h, err := argon2id.CreateHash(password, s.opt.PasswordParams)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// CreateUser adds a user who signs in with password. actor is who asked,
// for the audit trail ("user:alice", "cli:root").
func (s *Service) CreateUser(ctx context.Context, actor, username, password string, role Role) (*store.User, error) {
	name := normalizeUsername(username)
	if err := checkUsername(name); err != nil {
		return nil, err
	}
	if !role.Valid() {
		return nil, invalidf("role %q: use viewer, operator or admin", role)
	}
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	h, err := s.hash(password)
	if err != nil {
		return nil, err
	}
	u := &store.User{Username: name, PasswordHash: h, Role: string(role)}
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertUser(ctx, u); err != nil {
			if store.ConstraintViolation(err) == store.ViolationUnique {
				return &inputError{kind: ErrExists, msg: fmt.Sprintf("user %s already exists", name)}
			}
			return err
		}
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "user.add", ObjectType: "user",
			ObjectID: name, After: userJSON(u)})
	})
	if err != nil {
		return nil, fmt.Errorf("user add: %w", err)
	}
	return u, nil
}

// changeUser runs change on the user called username in one transaction
// with its audit entry; change returns the entry's detail.
func (s *Service) changeUser(ctx context.Context, actor, username, action string, change func(tx *store.Tx, u *store.User) (string, error)) error {
	name := normalizeUsername(username)
	if err := checkUsername(name); err != nil {
		return err
	}
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserByNameForUpdate(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return &inputError{kind: ErrNotFound, msg: fmt.Sprintf("no user %s (see the user list)", name)}
		}
		if err != nil {
			return err
		}
		before := userJSON(u)
		detail, err := change(tx, u)
		if err != nil {
			return err
		}
		if err := tx.UpdateUser(ctx, u); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: action, ObjectType: "user",
			ObjectID: name, Before: before, After: userJSON(u), Detail: detail})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Replace(action, ".", " ", 1), err)
	}
	return nil
}

// SetPassword gives a user a new password and ends their sessions, so
// whoever knew the old one is signed out everywhere. API keys stay.
func (s *Service) SetPassword(ctx context.Context, actor, username, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	h, err := s.hash(password)
	if err != nil {
		return err
	}
	return s.changeUser(ctx, actor, username, "user.passwd", func(tx *store.Tx, u *store.User) (string, error) {
		u.PasswordHash = h
		n, err := tx.DeleteUserSessions(ctx, u.ID)
		return fmt.Sprintf("password changed; %d sessions ended", n), err
	})
}

// SetRole changes a user's role; their sessions and keys act with the new
// role from their next request.
func (s *Service) SetRole(ctx context.Context, actor, username string, role Role) error {
	if !role.Valid() {
		return invalidf("role %q: use viewer, operator or admin", role)
	}
	return s.changeUser(ctx, actor, username, "user.role", func(tx *store.Tx, u *store.User) (string, error) {
		u.Role = string(role)
		return "", nil
	})
}

// DisableUser stops a user from signing in; their sessions end and their
// API keys stop working at once.
func (s *Service) DisableUser(ctx context.Context, actor, username string) error {
	return s.changeUser(ctx, actor, username, "user.disable", func(tx *store.Tx, u *store.User) (string, error) {
		u.Disabled = true
		n, err := tx.DeleteUserSessions(ctx, u.ID)
		return fmt.Sprintf("%d sessions ended", n), err
	})
}

// EnableUser lets a disabled user sign in again; their keys that are not
// revoked or expired work again.
func (s *Service) EnableUser(ctx context.Context, actor, username string) error {
	return s.changeUser(ctx, actor, username, "user.enable", func(tx *store.Tx, u *store.User) (string, error) {
		u.Disabled = false
		return "", nil
	})
}

// ListUsers returns every user, by username.
func (s *Service) ListUsers(ctx context.Context) ([]store.User, error) {
	return s.st.ListUsers(ctx)
}
