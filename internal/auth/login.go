package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/store"
)

// maxPasswordBytes bounds what a login hashes; no password is longer.
const maxPasswordBytes = 1024

// Login checks username and password and, when they are right, ends the
// session the request carried, starts a new one and sets its cookie on w.
//
// It is refused with a *RateLimitError, before the password is looked at,
// when LoginFailureLimit logins for this username failed within
// LoginFailureWindow, or LoginAddressFailureLimit from this client address:
// a right password does not get past a limit, so guessing cannot go on at
// any speed. The two are counted apart, so a few colleagues' typos from the
// office's one address do not lock anyone else out. A success forgets the
// username's failures, and is itself no failure of the address (but does
// not forget the address's other failures: one account's owner cannot
// clear the way for guesses at others). A wrong password, an unknown or a
// disabled user are all ErrBadCredentials.
func (s *Service) Login(w http.ResponseWriter, r *http.Request, username, password string) (*Principal, error) {
	ctx := r.Context()
	now := s.now()
	name := normalizeUsername(username)
	since := now.Add(-LoginFailureWindow)
	if err := s.st.PruneLoginFailures(ctx, since); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	type attempt struct {
		kind, subject string
		limit         int
		id            int64
	}
	attempts := []*attempt{{kind: store.LoginByIP, subject: s.clientAddr(r), limit: LoginAddressFailureLimit}}
	if checkUsername(name) == nil {
		attempts = append(attempts, &attempt{kind: store.LoginByUser, subject: name, limit: LoginFailureLimit})
	}
	forget := func() {
		for _, a := range attempts {
			if a.id != 0 {
				_ = s.st.DeleteLoginAttempt(context.WithoutCancel(ctx), a.id)
			}
		}
	}
	for _, a := range attempts {
		id, err := s.st.AddLoginAttempt(ctx, a.kind, a.subject, now)
		if err != nil {
			forget()
			return nil, fmt.Errorf("login: %w", err)
		}
		a.id = id
	}
	var wait time.Duration
	for _, a := range attempts {
		earlier, err := s.st.LoginAttemptsSince(ctx, a.kind, a.subject, since, a.id)
		if err != nil {
			forget()
			return nil, fmt.Errorf("login: %w", err)
		}
		if n := len(earlier); n >= a.limit {
			// The attempt may go ahead once all but limit-1 of the
			// earlier ones have left the window.
			wait = max(wait, earlier[n-a.limit].Add(LoginFailureWindow).Sub(now))
		}
	}
	if wait > 0 {
		// A refused attempt is not a failure: counting it would let the
		// limit run on for as long as someone keeps knocking.
		forget()
		return nil, &RateLimitError{RetryAfter: wait}
	}

	u, ok, err := s.checkPassword(ctx, name, password)
	if err != nil {
		forget()
		return nil, fmt.Errorf("login: %w", err)
	}
	if !ok {
		return nil, ErrBadCredentials // the attempts stay, as failures
	}
	for _, a := range attempts {
		if a.kind == store.LoginByUser {
			err = s.st.ClearLoginFailures(ctx, a.kind, a.subject)
		} else {
			// A success is no failure of the address.
			err = s.st.DeleteLoginAttempt(ctx, a.id)
		}
		if err != nil {
			return nil, fmt.Errorf("login: %w", err)
		}
	}

	token := randomToken()
	sess := &store.Session{TokenHash: secretHash(token), UserID: u.ID, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(s.opt.SessionTTL)}
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		// A session planted in the browser before login (fixation) must
		// not become the signed-in one: whatever the request carried ends.
		if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
			if err := tx.DeleteSession(ctx, secretHash(c.Value)); err != nil {
				return err
			}
		}
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		return tx.SetUserLastLogin(ctx, u.ID, now)
	})
	if err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	// Sessions nobody can use any more go now and then: at each login.
	if err := s.st.DeleteSessionsBefore(ctx, now, now.Add(-s.opt.IdleTimeout)); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/",
		Expires: sess.ExpiresAt, MaxAge: int(s.opt.SessionTTL.Seconds()),
		HttpOnly: true, Secure: s.opt.CookieSecure, SameSite: http.SameSiteLaxMode,
	})
	return &Principal{UserID: u.ID, Username: u.Username, Role: Role(u.Role)}, nil
}

// checkPassword returns the user called name when password is theirs and
// they may sign in. An unknown name costs the same hashing as a known one.
func (s *Service) checkPassword(ctx context.Context, name, password string) (*store.User, bool, error) {
	var u *store.User
	if checkUsername(name) == nil {
		var err error
		u, err = s.st.UserByName(ctx, name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
	}
	hash := s.dummy()
	if u != nil {
		hash = u.PasswordHash
	}
	if len(password) > maxPasswordBytes {
		password = ""
	}
	match, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		return nil, false, fmt.Errorf("check password of %s: %w", name, err)
	}
	if u == nil || !match || u.Disabled || len(password) == 0 {
		return nil, false, nil
	}
	return u, true, nil
}

func (s *Service) dummy() string {
	s.dummyOnce.Do(func() {
		// Only bad parameters fail; then every login fails too, with the
		// hash's error, which is what should be seen.
		s.dummyHash, _ = argon2id.CreateHash(randomToken(), s.opt.PasswordParams)
	})
	return s.dummyHash
}

// Logout ends the session the request carries, if any, and clears its
// cookie.
func (s *Service) Logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		if err := s.st.DeleteSession(r.Context(), secretHash(c.Value)); err != nil {
			return fmt.Errorf("logout: %w", err)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.opt.CookieSecure, SameSite: http.SameSiteLaxMode})
	return nil
}
