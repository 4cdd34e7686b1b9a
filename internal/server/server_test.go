package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// syncBuffer is a bytes.Buffer safe to write from serve's goroutines while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is one Run in the test's process.
type running struct {
	cfg    Config
	stderr *syncBuffer
	log    *syncBuffer
	done   chan error
	addr   string
}

var startedLine = regexp.MustCompile(`serve: 已启动 — http://(\S+) `)

// start runs serve with cfg (its output captured) and waits until it says
// it has started, failing the test when Run returns first.
func start(t *testing.T, ctx context.Context, cfg Config) *running {
	t.Helper()
	r := &running{stderr: &syncBuffer{}, log: &syncBuffer{}, done: make(chan error, 1)}
	cfg.Stderr = r.stderr
	cfg.Logger = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r.cfg = cfg
	go func() { r.done <- Run(ctx, cfg) }()
	for {
		select {
		case err := <-r.done:
			t.Fatalf("serve ended before it started: %v\nstderr:\n%s", err, r.stderr)
		default:
		}
		if m := startedLine.FindStringSubmatch(r.stderr.String()); m != nil {
			r.addr = m[1]
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLog waits until serve's log holds want.
func (r *running) waitLog(want string) {
	for !strings.Contains(r.log.String(), want) {
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 200)) // enough to tell whose answer it is
	return res.StatusCode, string(body)
}

// baseConfig is serve on a fresh database of dialect with the test
// configuration directory, on a free loopback port.
func baseConfig(t *testing.T, dialect string) Config {
	t.Helper()
	dataDir := t.TempDir()
	url := "sqlite://" + filepath.Join(dataDir, "zhizhi.db")
	if dialect == store.DialectPostgres {
		url = storetest.PostgresURL(t)
	}
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	return Config{DatabaseURL: url, DataDir: dataDir, ConfigDir: testConfigDir(t), Listen: "127.0.0.1:0",
		Workers: 1, Location: loc}
}

// TestRunMountsTheAcquisitionAPI: serve answers its probes, the REST API,
// the console and the portal, and the handler Config.Acquire makes — from
// the store, queue, polite client, live configuration, sign-in, metrics,
// zone and log serve runs with — on /v1/ and /v2/ and nowhere else. SIGHUP
// reads the configuration again; SIGTERM stops it gracefully, with nil.
func TestRunMountsTheAcquisitionAPI(t *testing.T) {
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			cfg := baseConfig(t, dialect)
			var got Deps
			cfg.Acquire = func(d Deps) (http.Handler, error) {
				got = d
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Test", "acquire")
					io.WriteString(w, "acquire "+r.Method+" "+r.URL.Path)
				}), nil
			}
			r := start(t, context.Background(), cfg)
			base := "http://" + r.addr

			if got.Store == nil || got.Queue == nil || got.Fetch == nil || got.Config == nil || got.Auth == nil ||
				got.Metrics == nil || got.Logger == nil || got.Location != cfg.Location {
				t.Errorf("Acquire got %+v, want every dependency and the configured zone", got)
			}
			if got.Config != nil {
				if sites := got.Config.Bundle().Sites; len(sites) != 1 || sites[0].SiteCode != "gd_ref" {
					t.Errorf("Acquire's configuration has sites %v; want the directory's gd_ref", sites)
				}
			}
			if got.Store != nil && got.Store.Dialect() != dialect {
				t.Errorf("Acquire's store is %s, want %s", got.Store.Dialect(), dialect)
			}
			for _, c := range []struct{ method, path, want string }{
				{"POST", "/v1/fetch", "acquire POST /v1/fetch"},
				{"POST", "/v2/scrape", "acquire POST /v2/scrape"},
				{"GET", "/v1/crawl/7", "acquire GET /v1/crawl/7"},
			} {
				if code, body := get(t, c.method, base+c.path); code != 200 || body != c.want {
					t.Errorf("%s %s: %d %q, want 200 %q", c.method, c.path, code, body, c.want)
				}
			}
			for _, c := range []struct {
				method, path string
				code         int
				body         string
			}{
				{"GET", "/healthz", 200, "ok\n"},
				{"GET", "/readyz", 200, "ready\n"},
				{"GET", "/api/v1/targets", 401, ""},
				{"GET", "/admin/", 303, ""},
				{"GET", "/v3/fetch", 404, ""},
			} {
				code, body := get(t, c.method, base+c.path)
				if code != c.code || c.body != "" && body != c.body || strings.HasPrefix(body, "acquire") {
					t.Errorf("%s %s: %d %q, want %d %q (not the acquisition API)", c.method, c.path, code, body, c.code, c.body)
				}
			}
			if !strings.Contains(r.stderr.String(), "获取 API /v1/ /v2/") {
				t.Errorf("the start line does not name the acquisition API:\n%s", r.stderr)
			}

			// A second serve on the same SQLite database is refused, and not
			// as a configuration error (the command line exits 1).
			if dialect == store.DialectSQLite {
				second := cfg
				second.Acquire, second.Stderr, second.Logger = nil, io.Discard, slog.New(slog.DiscardHandler)
				err := Run(context.Background(), second)
				var bad *ConfigError
				if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "stop it first") {
					t.Errorf("second serve on one SQLite database: %v, want a refusal that says to stop the first", err)
				}
			}

			alerts := filepath.Join(cfg.ConfigDir, config.AlertsFile)
			if err := os.WriteFile(alerts, []byte("webhooks:\n  - {name: ops, kind: json, url: http://127.0.0.1:9/alerts}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			r.waitLog("SIGHUP: reading the configuration again")
			r.waitLog("alert settings in force")

			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-r.done; err != nil {
				t.Fatalf("serve after SIGTERM: %v, want nil", err)
			}
			for _, want := range []string{"收到停止信号", "serve: 已停止"} {
				if !strings.Contains(r.stderr.String(), want) {
					t.Errorf("stderr after SIGTERM lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}

// TestRunWithoutAcquisitionAPI: with no Acquire, /v1/ and /v2/ are the
// portal's (not found), the start line says nothing of them, and serve
// stops with nil when its context ends.
func TestRunWithoutAcquisitionAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := start(t, ctx, baseConfig(t, store.DialectSQLite))
	for _, path := range []string{"/v1/fetch", "/v2/scrape"} {
		if code, _ := get(t, "POST", "http://"+r.addr+path); code != http.StatusNotFound {
			t.Errorf("POST %s without an acquisition API: %d, want 404", path, code)
		}
	}
	if strings.Contains(r.stderr.String(), "/v1/ /v2/") {
		t.Errorf("the start line names /v1/ /v2/ with no acquisition API:\n%s", r.stderr)
	}
	cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("serve after its context ended: %v, want nil", err)
	}
}

// TestRunRefusesWhatItCannotStartWith: settings or a configuration serve
// cannot start with are a *ConfigError naming what is wrong (the command
// line's exit 2), before anything is served; a failure of the machine
// (the address taken) is another error (exit 1).
func TestRunRefusesWhatItCannotStartWith(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, c *Config)
		config bool   // want a *ConfigError
		want   string // in the message
	}{
		{"no configuration directory", func(t *testing.T, c *Config) { c.ConfigDir = "" }, true, "no configuration directory"},
		{"configuration with errors", func(t *testing.T, c *Config) {
			writeFile(t, filepath.Join(c.ConfigDir, config.SitesDir, "broken.yaml"), "site_code: [\n")
		}, true, "broken.yaml"},
		{"alerts that cannot be delivered", func(t *testing.T, c *Config) {
			writeFile(t, filepath.Join(c.ConfigDir, config.AlertsFile),
				"webhooks:\n  - {name: ops, kind: feishu, url_env: ZHIZHI_TEST_UNSET_WEBHOOK_URL}\n")
		}, true, "ZHIZHI_TEST_UNSET_WEBHOOK_URL"},
		{"a database that does not open", func(t *testing.T, c *Config) { c.DatabaseURL = "mysql://127.0.0.1/zhizhi" }, true, "mysql"},
		{"an address taken", func(t *testing.T, c *Config) {
			r := start(t, context.Background(), baseConfig(t, store.DialectSQLite))
			t.Cleanup(func() {
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
				<-r.done
			})
			c.Listen = r.addr
		}, false, "cannot listen on"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, store.DialectSQLite)
			tc.change(t, &cfg)
			var stderr syncBuffer
			cfg.Stderr, cfg.Logger = &stderr, slog.New(slog.DiscardHandler)
			err := Run(context.Background(), cfg)
			var bad *ConfigError
			switch {
			case err == nil:
				t.Fatal("serve started; want a refusal")
			case errors.As(err, &bad) != tc.config:
				t.Errorf("%v: a configuration error %v, want %v", err, !tc.config, tc.config)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("%v: want it to name %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "已启动") {
				t.Errorf("serve said it started:\n%s", stderr.String())
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
