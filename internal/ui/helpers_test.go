package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// hostile is text a hostile page or file could bring into the database.
const hostile = `<script>alert("zz")</script>`

// testSessions is a small auth.Sessions for the console's tests: fixed
// users, sessions in memory behind a cookie. The real one (argon2id, rate
// limiting, database sessions) is tested in internal/auth.
type testSessions struct {
	mu       sync.Mutex
	users    map[string]testUser
	sessions map[string]*auth.Principal
}

type testUser struct {
	password string
	role     auth.Role
}

const testCookie = "zz_test_session"

// Users: admin, operator, viewer (password "pw-" + name) and "limited",
// whose logins are always refused as rate limited.
func newTestSessions() *testSessions {
	return &testSessions{sessions: map[string]*auth.Principal{}, users: map[string]testUser{
		"admin":    {"pw-admin", auth.RoleAdmin},
		"operator": {"pw-operator", auth.RoleOperator},
		"viewer":   {"pw-viewer", auth.RoleViewer},
		// A role the console does not know may do nothing.
		"guest": {"pw-guest", auth.Role("guest")},
	}}
}

func (s *testSessions) Authenticate(r *http.Request) (*auth.Principal, error) {
	c, err := r.Cookie(testCookie)
	if err != nil {
		return nil, auth.ErrUnauthenticated
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.sessions[c.Value]
	if !ok {
		return nil, auth.ErrUnauthenticated
	}
	return p, nil
}

func (s *testSessions) Login(w http.ResponseWriter, r *http.Request, username, password string) (*auth.Principal, error) {
	if username == "limited" {
		return nil, &auth.RateLimitError{RetryAfter: 4*time.Minute + 10*time.Second}
	}
	u, ok := s.users[username]
	if !ok || u.password != password {
		return nil, auth.ErrBadCredentials
	}
	_ = s.Logout(w, r)
	p := &auth.Principal{UserID: int64(len(username)), Username: username, Role: u.role}
	http.SetCookie(w, &http.Cookie{Name: testCookie, Value: s.start(p), Path: "/admin", HttpOnly: true})
	return p, nil
}

func (s *testSessions) start(p *auth.Principal) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.sessions[tok] = p
	s.mu.Unlock()
	return tok
}

func (s *testSessions) Logout(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(testCookie)
	if err != nil {
		return auth.ErrUnauthenticated
	}
	s.mu.Lock()
	delete(s.sessions, c.Value)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: testCookie, Value: "", Path: "/admin", MaxAge: -1})
	return nil
}

// world is a console on a real store synced from a copy of the repository's
// configuration (with hostile text planted in it), with host states, crawl
// logs, an audit entry and a queued job.
type world struct {
	st       *store.Store
	q        *queue.Queue
	sessions *testSessions
	h        http.Handler
	now      time.Time
	cfgDir   string
	web      *crawltest.World // the simulated web, in a simWorld
	corpus   *corpus.Service  // the corpus on st, as serve gives it to the console
}

// Hosts the world seeds.
const (
	hostCaptcha = "www.captcha.gov.test" // blocked by a CAPTCHA, flagged for review, robots.txt failing
	hostBackoff = "www.backoff.gov.test" // backing off after errors
	hostHealthy = "www.healthy.gov.test" // nothing wrong
)

func newWorld(t *testing.T, st *store.Store) *world {
	t.Helper()
	ctx := context.Background()
	cfg := copyConfig(t)
	b, problems := config.Load(cfg)
	if config.HasErrors(problems) {
		t.Fatalf("config: %v", config.Errors(problems))
	}
	f, err := os.Open(filepath.Join(cfg, config.DepartmentsFile))
	if err != nil {
		t.Fatal(err)
	}
	depts, bad := config.ReadDepartmentsCSV(f, config.DepartmentsFile)
	f.Close()
	if len(bad) > 0 {
		t.Fatalf("departments: %v", bad)
	}
	if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
		t.Fatal(err)
	}
	if _, err := configsync.Sync(ctx, st, b); err != nil {
		t.Fatal(err)
	}
	if err := queue.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(ctx, queue.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)

	// Every target was added just now; 45 days on, a column expected daily
	// is long stale while one expected monthly is not.
	now := time.Now().Add(45 * 24 * time.Hour)
	w := &world{st: st, q: q, sessions: newTestSessions(), now: now, cfgDir: cfg, corpus: corpus.New(st, "test")}
	w.seed(t)
	h, err := New(Options{Store: st, Sessions: w.sessions, Jobs: q, ConfigDir: cfg, Corpus: w.corpus,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w
}

// copyConfig copies the repository's config directory and plants hostile
// text in the news site: its name (shown on many pages) and a comment
// (shown in the YAML).
func copyConfig(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "demo", "config"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "config")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == filepath.Join("sites", "news.yaml") {
			s := strings.Replace(string(raw), "site_name: 北江新闻网\n", "site_name: '北江新闻网"+hostile+"'\n", 1)
			if s == string(raw) {
				t.Fatal("news.yaml: site_name line not found")
			}
			s2 := strings.Replace(s, "target_name: 北江新闻网｜本地新闻\n", "target_name: '本地新闻"+hostile+"'\n", 1)
			if s2 == s {
				t.Fatal("news.yaml: target_name line not found")
			}
			raw = []byte("# " + hostile + "\n" + s2)
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func (w *world) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	soon := w.now.Add(10 * time.Minute)
	for _, hs := range []*model.HostState{
		{Host: hostCaptcha, ConsecutiveErrors: 3, BlockReason: "captcha", NeedsReview: true},
		{Host: hostBackoff, ConsecutiveErrors: 2, BackoffUntil: &soon},
		{Host: hostHealthy},
	} {
		if err := w.st.PutHostHealth(ctx, hs); err != nil {
			t.Fatal(err)
		}
	}
	failedAt := w.now.Add(-time.Hour)
	if err := w.st.PutRobotsState(ctx, &model.RobotsState{Origin: "http://" + hostCaptcha + ":80", Host: hostCaptcha,
		FetchedAt: failedAt, Failures: 2, FailingSince: &failedAt, LastError: "http 503"}); err != nil {
		t.Fatal(err)
	}
	news, err := w.st.SiteByCode(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := w.st.TargetByCode(ctx, "news_local")
	if err != nil {
		t.Fatal(err)
	}
	status := 500
	for i := range 3 {
		l := &model.CrawlLog{SiteID: &news.ID, TargetID: &tg.ID, Host: "www.news.test", Purpose: model.PurposeList,
			ArticleURL: "http://www.news.test/news/?p=" + hostile, HTTPStatus: &status, ErrorClass: "http_5xx",
			ErrorMsg: "server said " + hostile, OccurredAt: w.now.Add(-time.Duration(i) * time.Minute)}
		if err := w.st.InsertCrawlLog(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.st.RecordAudit(ctx, &store.AuditEntry{Actor: "cli:root", Action: "target.update", ObjectType: "target",
		ObjectID: "news_local", After: []byte(`{"target_name":"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`),
		Detail: "imported " + hostile}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.q.CrawlNow(ctx, *tg); err != nil {
		t.Fatal(err)
	}
}

// login signs name in through the form and returns the session cookie.
func (w *world) login(t *testing.T, name string) *http.Cookie {
	t.Helper()
	rec := w.post(t, "/admin/login", nil, url.Values{"username": {name}, "password": {"pw-" + name}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("login %s: status %d, body %s", name, rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == testCookie {
			return c
		}
	}
	t.Fatalf("login %s: no session cookie", name)
	return nil
}

func (w *world) get(t *testing.T, path string, c *http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if c != nil {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

func (w *world) post(t *testing.T, path string, c *http.Cookie, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c != nil {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

// sqliteWorld is the world on a fresh SQLite store.
func sqliteWorld(t *testing.T) *world { return newWorld(t, storetest.SQLite(t)) }
