package store

import (
	"context"
	"fmt"
	"time"
)

// Session is a console sign-in. The token the browser holds is never
// stored, only its SHA-256 (TokenHash, hex), so reading the table gives
// nobody a way in.
type Session struct {
	ID         int64
	TokenHash  string
	UserID     int64
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// InsertSession adds a session and sets its ID.
func (t *Tx) InsertSession(ctx context.Context, sess *Session) error {
	id, err := t.c.insertID(ctx, `INSERT INTO user_session (token_hash, user_id, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, sess.TokenHash, sess.UserID, t.s.ts(sess.CreatedAt), t.s.ts(sess.LastSeenAt), t.s.ts(sess.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	sess.ID = id
	return nil
}

// SessionByHash returns the session whose token hashes to tokenHash and
// the user it belongs to, or ErrNotFound. Whether it is still good (expiry,
// idle time, a disabled user) is the caller's rule.
func (s *Store) SessionByHash(ctx context.Context, tokenHash string) (*Session, *User, error) {
	var (
		sess Session
		u    User
	)
	err := s.conn().queryRow(ctx, `SELECT s.id, s.token_hash, s.user_id, s.created_at, s.last_seen_at, s.expires_at, `+userCols+`
		FROM user_session s JOIN app_user u ON u.id = s.user_id WHERE s.token_hash = ?`, tokenHash).
		Scan(append([]any{&sess.ID, &sess.TokenHash, &sess.UserID, timeCol{&sess.CreatedAt}, timeCol{&sess.LastSeenAt},
			timeCol{&sess.ExpiresAt}}, userDest(&u)...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", notFound(err))
	}
	return &sess, &u, nil
}

// TouchSession records that the session was used at at.
func (s *Store) TouchSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := s.conn().exec(ctx, `UPDATE user_session SET last_seen_at = ? WHERE id = ?`, s.ts(at), id); err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// DeleteSession ends the session whose token hashes to tokenHash; an
// unknown one is no error.
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	return s.conn().deleteSession(ctx, tokenHash)
}

// DeleteSession is Store.DeleteSession inside a transaction.
func (t *Tx) DeleteSession(ctx context.Context, tokenHash string) error {
	return t.c.deleteSession(ctx, tokenHash)
}

func (c conn) deleteSession(ctx context.Context, tokenHash string) error {
	if _, err := c.exec(ctx, `DELETE FROM user_session WHERE token_hash = ?`, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions ends every session of a user and says how many.
func (t *Tx) DeleteUserSessions(ctx context.Context, userID int64) (int64, error) {
	res, err := t.c.exec(ctx, `DELETE FROM user_session WHERE user_id = ?`, userID)
	if err != nil {
		return 0, fmt.Errorf("delete sessions of user %d: %w", userID, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// DeleteSessionsBefore removes sessions whose absolute expiry or last use
// is older than the given times: they can never be used again.
func (s *Store) DeleteSessionsBefore(ctx context.Context, expiredBefore, lastSeenBefore time.Time) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM user_session WHERE expires_at <= ? OR last_seen_at <= ?`,
		s.ts(expiredBefore), s.ts(lastSeenBefore)); err != nil {
		return fmt.Errorf("delete old sessions: %w", err)
	}
	return nil
}
