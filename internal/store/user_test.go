package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const testHash = "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"

// TestUsersSessionsKeys: users, their sessions and keys round-trip on both
// dialects; the database itself refuses a second user of one name, an
// unknown role and a password kept other than as an argon2id hash.
func TestUsersSessionsKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return t0 }
		alice := &store.User{Username: "alice", PasswordHash: testHash, Role: "operator"}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return tx.InsertUser(ctx, alice) }); err != nil {
			t.Fatal(err)
		}
		for name, u := range map[string]store.User{
			"taken name":     {Username: "alice", PasswordHash: testHash, Role: "viewer"},
			"unknown role":   {Username: "bob", PasswordHash: testHash, Role: "root"},
			"plain password": {Username: "carol", PasswordHash: "hunter22", Role: "viewer"},
		} {
			err := s.WithTx(ctx, func(tx *store.Tx) error { return tx.InsertUser(ctx, &u) })
			if err == nil {
				t.Errorf("%s: stored", name)
			}
		}
		got, err := s.UserByName(ctx, "alice")
		if err != nil || got.ID != alice.ID || got.Role != "operator" || got.Disabled || !got.CreatedAt.Equal(t0) || got.LastLoginAt != nil {
			t.Fatalf("alice read back as %+v, %v", got, err)
		}
		if _, err := s.UserByName(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown user: %v", err)
		}

		hash := strings.Repeat("ab", 32)
		sess := &store.Session{TokenHash: hash, UserID: alice.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertSession(ctx, sess); err != nil {
				return err
			}
			return tx.SetUserLastLogin(ctx, alice.ID, t0)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TouchSession(ctx, sess.ID, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		gs, gu, err := s.SessionByHash(ctx, hash)
		if err != nil || gs.ID != sess.ID || !gs.LastSeenAt.Equal(t0.Add(time.Hour)) || !gs.ExpiresAt.Equal(t0.Add(12*time.Hour)) ||
			gu.Username != "alice" || gu.LastLoginAt == nil || !gu.LastLoginAt.Equal(t0) {
			t.Fatalf("session read back as %+v %+v, %v", gs, gu, err)
		}

		exp := t0.Add(90 * 24 * time.Hour)
		k := &store.APIKey{UserID: alice.ID, Name: "知识库导出", Prefix: "zk_abcdef", Scopes: []string{"read", "export"}, ExpiresAt: &exp}
		keyHash := strings.Repeat("cd", 32)
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return tx.InsertAPIKey(ctx, k, keyHash) }); err != nil {
			t.Fatal(err)
		}
		if err := s.WithTx(ctx, func(tx *store.Tx) error {
			return tx.InsertAPIKey(ctx, &store.APIKey{UserID: alice.ID, Name: "again", Prefix: "zk_x", Scopes: []string{"read"}}, keyHash)
		}); store.ConstraintViolation(err) != store.ViolationUnique {
			t.Errorf("a second key with the same hash: %v", err)
		}
		gk, ku, err := s.APIKeyByHash(ctx, keyHash)
		if err != nil || gk.ID != k.ID || gk.Username != "alice" || !slices.Equal(gk.Scopes, []string{"read", "export"}) ||
			gk.ExpiresAt == nil || !gk.ExpiresAt.Equal(exp) || gk.RevokedAt != nil || ku.ID != alice.ID {
			t.Fatalf("key read back as %+v %+v, %v", gk, ku, err)
		}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, k.ID, t0.Add(time.Hour)) }); err != nil {
			t.Fatal(err)
		}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, k.ID, t0.Add(2*time.Hour)) }); err != nil {
			t.Fatal(err)
		}
		keys, err := s.ListAPIKeys(ctx, alice.ID)
		if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("after two revokes: %+v, %v (want the first stamp kept)", keys, err)
		}

		alice.Disabled = true
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			if err := tx.UpdateUser(ctx, alice); err != nil {
				return err
			}
			n, err := tx.DeleteUserSessions(ctx, alice.ID)
			if n != 1 {
				t.Errorf("%d sessions ended, want 1", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SessionByHash(ctx, hash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session after its user's sessions were ended: %v", err)
		}
		if u, _ := s.UserByName(ctx, "alice"); u == nil || !u.Disabled {
			t.Errorf("disabled flag not kept: %+v", u)
		}
	})
}

// TestLoginAttempts: attempts are counted per subject within a window,
// oldest first, one attempt can be left out, and a subject's count can be
// cleared; old ones are pruned.
func TestLoginAttempts(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		var ids []int64
		for i := range 3 {
			id, err := s.AddLoginAttempt(ctx, store.LoginByUser, "alice", t0.Add(time.Duration(i)*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if _, err := s.AddLoginAttempt(ctx, store.LoginByIP, "192.0.2.7", t0); err != nil {
			t.Fatal(err)
		}
		got, err := s.LoginAttemptsSince(ctx, store.LoginByUser, "alice", t0, ids[2])
		if err != nil || len(got) != 1 || !got[0].Equal(t0.Add(time.Minute)) {
			t.Fatalf("attempts after t0 but the last: %v, %v", got, err)
		}
		if err := s.DeleteLoginAttempt(ctx, ids[0]); err != nil {
			t.Fatal(err)
		}
		got, _ = s.LoginAttemptsSince(ctx, store.LoginByUser, "alice", t0.Add(-time.Hour), 0)
		if len(got) != 2 {
			t.Errorf("%d attempts after deleting one of 3", len(got))
		}
		if err := s.PruneLoginFailures(ctx, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.LoginAttemptsSince(ctx, store.LoginByUser, "alice", t0.Add(-time.Hour), 0)
		if len(got) != 1 || !got[0].Equal(t0.Add(2*time.Minute)) {
			t.Errorf("after pruning: %v", got)
		}
		if err := s.ClearLoginFailures(ctx, store.LoginByUser, "alice"); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.LoginAttemptsSince(ctx, store.LoginByUser, "alice", t0.Add(-time.Hour), 0); len(got) != 0 {
			t.Errorf("after clearing: %v", got)
		}
	})
}
