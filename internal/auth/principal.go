// Package auth owns who may do what in zhizhi's HTTP surfaces: local users
// with argon2id password hashes, server-side sessions, API keys, the three
// roles, login rate limiting and the middleware that puts the caller on the
// request's context.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// API key scopes. A key may do what its scopes name and its user's role
// allows, no more; a console session has every scope its role allows.
const (
	// ScopeRead reads through the API: sites, targets, departments,
	// articles, crawl logs, the column registry (any role).
	ScopeRead = "read"
	// ScopeWrite makes the changes the user's role allows: targets,
	// departments, crawl now, column subscriptions (operator); users, keys
	// and host blocks (admin).
	ScopeWrite = "write"
	// ScopeExport reads the incremental export, the feed the knowledge
	// base takes articles from (operator or admin).
	ScopeExport = "export"
	// ScopeAcquire asks zhizhi to fetch, render, crawl or parse a page of
	// the caller's choosing now (the /v1 acquisition API), within the key's
	// budgets (operator or admin). It is an operator's scope because each
	// such request makes zhizhi itself visit a site, under its own
	// User-Agent and against its hosts' politeness allowance, and spends
	// browser time and OCR: the same weight as "crawl now", which a viewer
	// may not do either. It grants no write: a key needs write for that.
	ScopeAcquire = "acquire"
)

// Scopes lists every scope, in the order they are shown.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeExport, ScopeAcquire}

// scopeList is Scopes for a message: "read, write, export or acquire".
func scopeList() string {
	return strings.Join(Scopes[:len(Scopes)-1], ", ") + " or " + Scopes[len(Scopes)-1]
}

// scopeRole is the least role that may use a scope.
func scopeRole(scope string) Role {
	switch scope {
	case ScopeRead:
		return RoleViewer
	case ScopeWrite, ScopeExport, ScopeAcquire:
		return RoleOperator
	}
	return ""
}

// Allows reports whether p may act within scope: its role must allow the
// scope and, for an API key, the key must carry it. A session allows every
// scope its role allows. An unknown scope is never allowed. Which role a
// particular write needs (an admin for users) is checked on top of this
// with Role.AtLeast.
func (p *Principal) Allows(scope string) bool {
	if p == nil {
		return false
	}
	need := scopeRole(scope)
	if need == "" || !p.Role.AtLeast(need) {
		return false
	}
	if p.APIKeyID == 0 {
		return true
	}
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// Errors of managing users and keys; each comes with a message saying what
// to change, and matches one of these with errors.Is.
var (
	// ErrInvalid: a bad username, password, role, scope, name or expiry.
	ErrInvalid = errors.New("invalid input")
	// ErrNotFound: no such user or API key.
	ErrNotFound = errors.New("not found")
	// ErrExists: the username is taken.
	ErrExists = errors.New("already exists")
)

// inputError is a refusal because of what was asked; its message is the
// whole story, kind says which sentinel it matches.
type inputError struct {
	kind error
	msg  string
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.kind }

func invalidf(format string, args ...any) error {
	return &inputError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}
