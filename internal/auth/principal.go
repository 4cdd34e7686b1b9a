// Package auth owns who may do what in zhizhi's HTTP surfaces: local users
// with argon2id password hashes, server-side sessions, API keys, the three
// roles, login rate limiting and the middleware that puts the caller on the
// request's context.
package auth

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Role is what a caller may do. Each role may do everything the roles
// below it may.
type Role string

const (
	RoleViewer   Role = "viewer"   // reads everything in the console and the API
	RoleOperator Role = "operator" // also changes targets, departments, crawls now, exports
	RoleAdmin    Role = "admin"    // also manages users, API keys and host blocks
)

func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r may do what min may. An unknown role may do
// nothing.
func (r Role) AtLeast(min Role) bool { return r.rank() > 0 && r.rank() >= min.rank() }

// Principal is the authenticated caller of one request: a console user
// (UserID set) or an API key (APIKeyID set, acting for the user who made it).
type Principal struct {
	UserID   int64
	Username string
	Role     Role
	APIKeyID int64    // 0 for a console session
	Scopes   []string // an API key's scopes; nil for a session
}

// Actor names the principal in the audit trail: "user:alice" or
// "apikey:7(alice)".
func (p *Principal) Actor() string {
	if p == nil {
		return "system"
	}
	if p.APIKeyID != 0 {
		return "apikey:" + strconv.FormatInt(p.APIKeyID, 10) + "(" + p.Username + ")"
	}
	return "user:" + p.Username
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal the middleware put on ctx.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(*Principal)
	return p, ok && p != nil
}

// Errors of authentication, for the console and the API to tell apart.
var (
	// ErrUnauthenticated: the request carries no session or key, or one
	// that is unknown, expired, revoked or belongs to a disabled user.
	ErrUnauthenticated = errors.New("not signed in")
	// ErrBadCredentials: a login with a wrong username or password (the
	// two are not told apart).
	ErrBadCredentials = errors.New("wrong username or password")
	// ErrRateLimited: too many failed logins; see RateLimitError.
	ErrRateLimited = errors.New("too many failed logins")
)

// RateLimitError says how long a refused login must wait. It matches
// ErrRateLimited with errors.Is.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string        { return ErrRateLimited.Error() }
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Authenticator finds the caller of a request: a console session cookie or
// an "Authorization: Bearer" API key. *Service implements it.
type Authenticator interface {
	Authenticate(r *http.Request) (*Principal, error)
}

// Sessions is what the console needs to sign people in and out. Login
// checks the credentials (rate limited), ends any session the request
// carried and starts a new one (a fresh identifier, so a session planted
// before login is never the one used after it), and sets its cookie on w.
// *Service implements it.
type Sessions interface {
	Authenticator
	Login(w http.ResponseWriter, r *http.Request, username, password string) (*Principal, error)
	Logout(w http.ResponseWriter, r *http.Request) error
}
