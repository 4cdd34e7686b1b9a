package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/ledger"
	"zhizhi/internal/store"
)

// CookieName is the console's session cookie.
const CookieName = "zhizhi_session"

// The login limits, counted separately within one window. A username is
// refused after LoginFailureLimit failures on it; a client address after
// LoginAddressFailureLimit failures from it, whichever usernames they
// tried. The address limit is high because a whole office often sits
// behind one NAT address: its staff's typos never reach it, and only
// guessing across many usernames does. Either refuses further attempts
// until the oldest failure leaves the window.
const (
	LoginFailureLimit        = 5
	LoginAddressFailureLimit = 50
	LoginFailureWindow       = 15 * time.Minute
)

// How often at most a session's last use and a key's last use are written:
// every request would be a write for nothing.
const touchEvery = time.Minute

// DefaultPasswordParams are the argon2id parameters of new password
// hashes: 19 MiB, two passes, one lane (OWASP's first choice), about
// 50 ms on a small server, and one hash at a time per login stays small.
var DefaultPasswordParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Options tune a Service; zero values take the defaults.
type Options struct {
	// Now is the clock every expiry and the login limit read (default
	// time.Now).
	Now func() time.Time
	// SessionTTL is how long a session lasts after sign-in, however
	// active (default 12 h).
	SessionTTL time.Duration
	// IdleTimeout ends a session unused for this long (default 2 h).
	IdleTimeout time.Duration
	// CookieSecure marks the session cookie Secure: set it when the
	// console is served over HTTPS.
	CookieSecure bool
	// PasswordParams are the argon2id parameters of new hashes (default
	// DefaultPasswordParams). Tests pass cheaper ones.
	PasswordParams *argon2id.Params
	// ClientIPHeader, behind a reverse proxy, is the header it puts the
	// client's address in (X-Real-IP, X-Forwarded-For); it is read only on
	// requests from the proxy on this machine or the private network, as
	// the portal reads it. Empty: the peer address.
	ClientIPHeader string
}

// Service signs people in and out, finds the caller of a request and
// manages users and API keys, all kept in the store.
type Service struct {
	st  *store.Store
	opt Options

	// A hash of nothing anyone knows: a login for an unknown username is
	// checked against it, so it takes as long as one for a real user and
	// the time does not tell which usernames exist.
	dummyOnce sync.Once
	dummyHash string

	// clientAddr is the address the login limit counts.
	clientAddr func(r *http.Request) string
}

var (
	_ Sessions      = (*Service)(nil)
	_ Authenticator = (*Service)(nil)
)

// New returns a Service on st.
func New(st *store.Store, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.SessionTTL <= 0 {
		opt.SessionTTL = 12 * time.Hour
	}
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = 2 * time.Hour
	}
	if opt.PasswordParams == nil {
		opt.PasswordParams = DefaultPasswordParams
	}
	// The portal's own reading of a client's address: one rule for both
	// (an IPv6 client by its /64, a forwarded header only from a proxy).
	return &Service{st: st, opt: opt, clientAddr: ledger.ProxiedAddress(opt.ClientIPHeader)}
}

func (s *Service) now() time.Time { return s.opt.Now().UTC().Truncate(time.Microsecond) }

// randomToken returns 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// secretHash is how session tokens and API keys are kept: SHA-256, hex.
// Both are 256 random bits, so a fast hash is enough; a slow one would only
// slow every request.
func secretHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate finds the caller: an "Authorization: Bearer" API key when
// the header is there (a bad one is refused, never passed over for the
// cookie), else the session cookie. It returns ErrUnauthenticated for no
// credentials or dead ones, and other errors when the store fails.
func (s *Service) Authenticate(r *http.Request) (*Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, key, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return nil, ErrUnauthenticated
		}
		return s.authenticateKey(r.Context(), strings.TrimSpace(key))
	}
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil, ErrUnauthenticated
	}
	return s.authenticateSession(r.Context(), c.Value)
}

func (s *Service) authenticateSession(ctx context.Context, token string) (*Principal, error) {
	sess, u, err := s.st.SessionByHash(ctx, secretHash(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	now := s.now()
	if u.Disabled || !now.Before(sess.ExpiresAt) || !now.Before(sess.LastSeenAt.Add(s.opt.IdleTimeout)) {
		return nil, ErrUnauthenticated
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.st.TouchSession(ctx, sess.ID, now); err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
	}
	return &Principal{UserID: u.ID, Username: u.Username, Role: Role(u.Role)}, nil
}

func (s *Service) authenticateKey(ctx context.Context, key string) (*Principal, error) {
	if !strings.HasPrefix(key, keyPrefix) {
		return nil, ErrUnauthenticated
	}
	k, u, err := s.st.APIKeyByHash(ctx, secretHash(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	now := s.now()
	if u.Disabled || k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return nil, ErrUnauthenticated
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= touchEvery {
		if err := s.st.TouchAPIKey(ctx, k.ID, now); err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
	}
	return &Principal{UserID: u.ID, Username: u.Username, Role: Role(u.Role), APIKeyID: k.ID, Scopes: k.Scopes}, nil
}

// Middleware puts the caller of each request, when there is one, on its
// context (FromContext). It never refuses a request: which pages need
// which role is the handlers' decision.
func (s *Service) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Authenticate(r)
		switch {
		case err == nil:
			r = r.WithContext(WithPrincipal(r.Context(), p))
		case !errors.Is(err, ErrUnauthenticated):
			slog.Error("authenticate request", "path", r.URL.Path, "err", err)
		}
		next.ServeHTTP(w, r)
	})
}

// CrossOrigin refuses state-changing requests (anything but GET, HEAD and
// OPTIONS) that a browser says come from another site, with Go's
// CrossOriginProtection: it reads Sec-Fetch-Site, or compares Origin with
// Host. A request without those browser headers, such as an API client
// with a key, passes.
func CrossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"cross_origin","detail":"cross-site request refused"}`+"\n")
			return
		}
		http.Error(w, "跨站请求已拒绝：请从本站页面提交。", http.StatusForbidden)
	}))
	return p.Handler(next)
}
