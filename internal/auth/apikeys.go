package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"zhizhi/internal/store"
)

// keyPrefix starts every API key, so a leaked one is recognisable (secret
// scanners, logs) and a cookie is never mistaken for one.
const keyPrefix = "zk_"

// displayPrefixLen is how much of a key is kept in clear to tell keys
// apart: "zk_" and six characters, 36 of the key's 256 random bits.
const displayPrefixLen = len(keyPrefix) + 6

// ParseScopes reads a comma-separated scope list ("read,export"), each
// scope once, in the order of Scopes.
func ParseScopes(s string) ([]string, error) {
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		if part == "" {
			continue
		}
		if scopeRole(part) == "" {
			return nil, invalidf("scope %q: use %s, separated by commas", part, scopeList())
		}
		seen[part] = true
	}
	var out []string
	for _, sc := range Scopes {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, invalidf("no scope: give %s, separated by commas", scopeList())
	}
	return out, nil
}

// keyView is a key as the audit trail keeps it: never the key nor its hash.
type keyView struct {
	ID        int64      `json:"id"`
	User      string     `json:"user"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func keyJSON(k *store.APIKey) json.RawMessage {
	b, _ := json.Marshal(keyView{ID: k.ID, User: k.Username, Name: k.Name, Scopes: k.Scopes,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt})
	return b
}

// CreateAPIKey makes a key for username, named name (a label for people),
// with scopes, expiring at expiresAt (nil: never). It returns the key
// itself, which is stored only hashed: show it once and it is gone. A scope
// the user's role does not allow is refused (a viewer's key reads only).
func (s *Service) CreateAPIKey(ctx context.Context, actor, username, name string, scopes []string, expiresAt *time.Time) (string, *store.APIKey, error) {
	return s.CreateAPIKeyWith(ctx, actor, username, name, scopes, expiresAt, nil)
}

// CreateAPIKeyWith is CreateAPIKey that also runs also (when not nil) in
// the key's transaction, once the key has its id: what belongs with the
// key (its budget) is made with it or not at all.
func (s *Service) CreateAPIKeyWith(ctx context.Context, actor, username, name string, scopes []string, expiresAt *time.Time,
	also func(tx *store.Tx, keyID int64) error) (string, *store.APIKey, error) {
	uname := normalizeUsername(username)
	if err := checkUsername(uname); err != nil {
		return "", nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return "", nil, invalidf("key name %q: give a label of 1 to 100 bytes saying what the key is for", name)
	}
	if len(scopes) == 0 {
		return "", nil, invalidf("no scope: give %s", scopeList())
	}
	for _, sc := range scopes {
		if scopeRole(sc) == "" {
			return "", nil, invalidf("scope %q: use %s", sc, scopeList())
		}
	}
	if expiresAt != nil && !expiresAt.After(s.now()) {
		return "", nil, invalidf("expiry %s is not in the future", expiresAt.Format(time.RFC3339))
	}
	key := keyPrefix + randomToken()
	k := &store.APIKey{Username: uname, Name: name, Prefix: key[:displayPrefixLen], Scopes: slices.Clone(scopes)}
	if expiresAt != nil {
		at := expiresAt.UTC().Truncate(time.Microsecond)
		k.ExpiresAt = &at
	}
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserByNameForUpdate(ctx, uname)
		if errors.Is(err, store.ErrNotFound) {
			return &inputError{kind: ErrNotFound, msg: fmt.Sprintf("no user %s (see the user list)", uname)}
		}
		if err != nil {
			return err
		}
		if u.Disabled {
			return invalidf("user %s is disabled: enable them first", uname)
		}
		for _, sc := range scopes {
			if !Role(u.Role).AtLeast(scopeRole(sc)) {
				return invalidf("user %s is a %s: their key cannot have scope %s (a viewer's key can only read)", uname, u.Role, sc)
			}
		}
		k.UserID = u.ID
		if err := tx.InsertAPIKey(ctx, k, secretHash(key)); err != nil {
			return err
		}
		if err := tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "apikey.create", ObjectType: "apikey",
			ObjectID: fmt.Sprint(k.ID), After: keyJSON(k)}); err != nil {
			return err
		}
		if also != nil {
			return also(tx, k.ID)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("apikey create: %w", err)
	}
	return key, k, nil
}

// ListAPIKeys returns the keys of username, or everyone's for "", oldest
// first; never the keys themselves.
func (s *Service) ListAPIKeys(ctx context.Context, username string) ([]store.APIKey, error) {
	var userID int64
	if username != "" {
		name := normalizeUsername(username)
		u, err := s.st.UserByName(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &inputError{kind: ErrNotFound, msg: fmt.Sprintf("no user %s (see the user list)", name)}
		}
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		userID = u.ID
	}
	return s.st.ListAPIKeys(ctx, userID)
}

// RevokeAPIKey stops key id working from its next request. Revoking a
// revoked key changes nothing and is no error.
func (s *Service) RevokeAPIKey(ctx context.Context, actor string, id int64) error {
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		k, err := tx.APIKeyForUpdate(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return &inputError{kind: ErrNotFound, msg: fmt.Sprintf("no api key %d (see the key list)", id)}
		}
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		before := keyJSON(k)
		now := s.now()
		if err := tx.RevokeAPIKey(ctx, id, now); err != nil {
			return err
		}
		k.RevokedAt = &now
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "apikey.revoke", ObjectType: "apikey",
			ObjectID: fmt.Sprint(id), Before: before, After: keyJSON(k)})
	})
	if err != nil {
		return fmt.Errorf("apikey revoke: %w", err)
	}
	return nil
}
