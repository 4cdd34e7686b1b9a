// Package server owns `zhizhi serve` as a running process: it opens the
// database and takes the serve lock, loads the configuration and keeps it
// live (config sync, SIGHUP), starts the crawl workers, and answers HTTP —
// the public portal, the admin console, the REST API under /api/v1, the
// acquisition API under /v1 and /v2 when one is given, and the health,
// readiness and metrics endpoints — until SIGINT, SIGTERM or its context
// ends, when it stops gracefully. The command line parses the flags into a
// Config and calls Run.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/auth"
	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/config/zone"
	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/health"
	"zhizhi/internal/ledger"
	"zhizhi/internal/metrics"
	"zhizhi/internal/model"
	"zhizhi/internal/portal"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// DefaultListen is where serve answers HTTP when Config.Listen is empty.
const DefaultListen = "127.0.0.1:8080"

// stopGrace bounds a graceful stop: jobs under way get the queue's drain
// grace to finish what is in flight, then are cancelled.
const stopGrace = queue.DrainGrace + 5*time.Second

// Config is what serve runs with: where its database and configuration
// are, how the polite client identifies itself, and serve's own flags.
type Config struct {
	// DatabaseURL and DataDir are as store.Open takes them; the database
	// and its schema are made when missing.
	DatabaseURL string
	DataDir     string
	// ConfigDir is the configuration directory, read at the start and
	// again at every `config sync` and SIGHUP. Required.
	ConfigDir string
	// Client is the polite client's settings (resolve map, User-Agent,
	// browser tier); its Store and ObserveRequest are serve's own. The
	// resolve map is also what the configuration is loaded knowing.
	Client fetch.ClientOptions

	// Listen is the HTTP address; "" means DefaultListen.
	Listen string
	// Workers is how many crawl jobs this process works at once, JobBudget
	// how long one works before it yields, Tick how often the schedule is
	// looked at (and the configuration generation); zero takes the
	// queue's defaults.
	Workers   int
	JobBudget time.Duration
	Tick      time.Duration
	// Location is the zone schedule_cron is read and times are shown in;
	// nil means queue.DefaultTimeZone.
	Location *time.Location
	// SecureCookies marks the console's session cookie Secure, for a
	// console reached through HTTPS (behind a TLS-terminating proxy).
	SecureCookies bool
	// ClientIPHeader names the header a reverse proxy puts a reader's
	// address in; "" counts portal visitors by the connection's peer.
	ClientIPHeader string

	// Acquire, when set, makes the handler mounted on /v1/ and /v2/ (the
	// acquisition API), from what serve runs with. An error stops the
	// start.
	Acquire func(Deps) (http.Handler, error)
	// MCP, when set, makes the handler mounted on /mcp (the MCP server
	// over the corpus and the acquisition API, streamable HTTP). It is
	// made after Acquire.
	MCP func(Deps) (http.Handler, error)

	// Stderr hears what serve tells its operator (started, stopping, jobs
	// taken back); nil means os.Stderr.
	Stderr io.Writer
	// Logger is serve's log; nil means slog.Default().
	Logger *slog.Logger
}

// Deps is what a handler mounted by serve works with: the same store,
// queue, polite client and configuration as the crawl workers.
type Deps struct {
	Store *store.Store
	Queue *queue.Queue
	// Fetch is the polite client the crawl workers use.
	Fetch *fetch.Client
	// Config is the configuration in force, kept up to date.
	Config *configsync.Live
	// Auth signs requests in: console sessions and API keys.
	Auth     *auth.Service
	Metrics  *metrics.Metrics
	Location *time.Location
	Logger   *slog.Logger
}

// ConfigError is a setting or a configuration directory serve cannot start
// with: a database that does not open, a configuration with errors, an
// alerts.yaml that cannot be put in force. Nothing was served; the command
// line exits 2 on it.
type ConfigError struct {
	Err error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// withDefaults fills the zero fields, refusing a Config serve cannot run
// with.
func (c Config) withDefaults() (Config, error) {
	if c.ConfigDir == "" {
		return c, configErrorf("serve: no configuration directory")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Workers == 0 {
		c.Workers = queue.DefaultWorkers
	}
	if c.JobBudget == 0 {
		c.JobBudget = queue.DefaultBudget
	}
	if c.Tick == 0 {
		c.Tick = queue.DefaultTickEvery
	}
	if c.Location == nil {
		loc, err := zone.Load(queue.DefaultTimeZone)
		if err != nil {
			return c, configErrorf("serve: %v", err)
		}
		c.Location = loc
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// Run serves until ctx ends or the process gets SIGINT or SIGTERM, then
// stops gracefully: no new jobs are taken, work in flight gets its grace,
// what was collected is kept and unfinished crawls stay queued. SIGHUP
// reads the configuration directory again. It returns nil after a graceful
// stop, a *ConfigError when the settings or the configuration do not let
// it start, and any other error when serving failed.
func Run(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	log, errw := cfg.Logger, cfg.Stderr
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// SIGHUP reads the configuration again; caught from the start so that
	// one sent while serve starts does not end it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	st, err := openStore(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	release, err := st.LockServe(ctx)
	if err != nil {
		if errors.Is(err, store.ErrServeRunning) {
			return fmt.Errorf("serve: %w (%s) — stop it first, or use PostgreSQL (ZHIZHI_DATABASE_URL=postgres://…) to run several", err, cfg.DatabaseURL)
		}
		return fmt.Errorf("serve: %w", err)
	}
	defer release()
	// The generation is read before the files: a sync in between is seen
	// at the first check and read again.
	generation, err := st.ConfigGeneration(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	load := config.Options{Resolve: cfg.Client.Resolve}
	b, problems := config.LoadWith(cfg.ConfigDir, load)
	if msg := config.Refusal(cfg.ConfigDir, problems); msg != "" {
		return &ConfigError{Err: errors.New(msg)}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("serve: cannot listen on %s (--listen / ZHIZHI_LISTEN): %w", cfg.Listen, err)
	}
	// Every return before srv takes the listener over closes it.
	defer func() {
		if ln != nil {
			ln.Close()
		}
	}()
	// Alerts follow alerts.yaml as the configuration is read again (SIGHUP,
	// `config sync`); without the file nothing is raised until it appears.
	alerter := &alert.Alerter{Store: st}
	if err := alerter.Reconfigure(b.Alerts); err != nil {
		return configErrorf("serve: %w", err)
	}
	var q *queue.Queue
	m := metrics.New(metrics.Options{Store: st, Logger: log,
		StaleTargets: func(ctx context.Context) (int, error) {
			rep, err := health.Check(ctx, st, time.Now())
			return len(rep.Stale), err
		},
		QueueDepth: func(ctx context.Context) (map[string]int, error) {
			if q == nil {
				return nil, errors.New("job queue not open yet")
			}
			byState, err := q.Depth(ctx)
			if err != nil {
				return nil, err
			}
			out := make(map[string]int, len(byState))
			for k, v := range byState {
				out[string(k)] = v
			}
			return out, nil
		},
	})
	copts := cfg.Client
	copts.Store, copts.ObserveRequest = st, m.ObserveRequest
	if copts.Logger == nil {
		copts.Logger = log
	}
	client, err := crawl.NewClient(ctx, copts, b)
	if err != nil {
		return err
	}
	defer client.Close() // stops Chromium and removes its profile
	live := liveConfig(st, b, generation, client, alerter, cfg.ConfigDir, load, log)
	cards, err := crawl.LoadCardIndex(ctx, st)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Articles stored before cards existed get theirs from their stored
	// text, in the background: the portal shows them as they come. It stops
	// with serve, and serve waits for it before the store closes (the
	// deferred wait runs before the deferred st.Close); the next start goes
	// on where it stopped.
	backfillCtx, stopBackfill := context.WithCancel(ctx)
	backfilled := make(chan struct{})
	go func() {
		defer close(backfilled)
		n, err := crawl.BackfillCards(backfillCtx, st, cards)
		switch {
		case err != nil && backfillCtx.Err() != nil:
			log.Info("serve: cards of stored articles stopped with serve; the next start goes on", "made", n)
		case err != nil:
			log.Warn("serve: cards of stored articles not all made; the next start goes on", "made", n, "err", err)
		case n > 0:
			log.Info("serve: cards made for stored articles", "made", n)
		}
	}()
	defer func() {
		stopBackfill()
		<-backfilled
	}()
	// The portal's visits, counted per visitor for BotScore; what is
	// buffered is written when serve stops.
	recOpts := ledger.RecorderOptions{Log: log}
	if cfg.ClientIPHeader != "" {
		recOpts.ClientIP = ledger.ProxiedAddress(cfg.ClientIPHeader)
	}
	visits := ledger.NewRecorder(st, recOpts)
	defer func() {
		if err := visits.Close(); err != nil {
			log.Error("serve: portal visits not written", "err", err)
		}
	}()
	sealer := &ledger.Sealer{Store: st, Human: ledger.ClosingHumanSource(st)}
	host, _ := os.Hostname()
	// The process's id in the queue and its heartbeat row: a restart with
	// the same pid (a container's pid 1) is another process, whose
	// predecessor's jobs must still be taken back.
	workerID := fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.N(0x10000))
	corpora := corpus.New(st, cfg.Client.Version)
	q, err = queue.Open(ctx, queue.Options{
		Store: st, Fetch: client, CurrentBundle: live.Current, Workers: cfg.Workers, Budget: cfg.JobBudget, TickEvery: cfg.Tick,
		Location: cfg.Location, Log: log, ID: workerID, Alerter: alerter, Cards: cards,
		Onboard: onboardWizard(client, live),
		Seal: func(ctx context.Context) error {
			sealed, err := sealer.SealDue(ctx)
			for _, day := range sealed {
				log.Info("ledgers sealed", "day", day)
			}
			return err
		},
		OnResult: func(ctx context.Context, kind string, t model.Target, r crawl.Result, wait time.Duration) {
			logTargetResult(log, kind, t, r)
			if kind == queue.KindCrawl {
				if err := crawl.RecordRun(ctx, st, t, r, "serve "+workerID); err != nil {
					log.Warn("record the run of a target", "target", t.TargetCode, "err", err)
				}
			}
			if r.Created+r.Updated > 0 {
				// New or changed articles: the intake rules people set up
				// take them into the corpus now (nothing when none apply).
				sum, err := corpora.RunRules(ctx, nil)
				if err != nil {
					log.Warn("corpus intake rules", "target", t.TargetCode, "err", err)
				} else if sum.NewWorks+sum.NewRevisions > 0 || len(sum.Failures) > 0 {
					log.Info("corpus intake rules", "target", t.TargetCode, "new_works", sum.NewWorks,
						"new_revisions", sum.NewRevisions, "failed", len(sum.Failures))
				}
			}
			m.ObserveCrawl(r)
			m.ObserveJob(kind, wait, r.Finished.Sub(r.Started), metrics.JobOutcome(r))
		},
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var ready atomic.Bool
	mux := probeMux(st, &ready, live.Failure)
	mux.Handle("GET /metrics", m.Handler())
	sessions := auth.New(st, auth.Options{CookieSecure: cfg.SecureCookies, ClientIPHeader: cfg.ClientIPHeader})
	var acquireAPI http.Handler
	if cfg.Acquire != nil {
		h, err := cfg.Acquire(Deps{Store: st, Queue: q, Fetch: client, Config: live, Auth: sessions, Metrics: m,
			Location: cfg.Location, Logger: log})
		if err != nil {
			return fmt.Errorf("serve: acquisition API: %w", err)
		}
		mux.Handle("/v1/", h)
		mux.Handle("/v2/", h)
		acquireAPI = h
	}
	if cfg.MCP != nil {
		h, err := cfg.MCP(Deps{Store: st, Queue: q, Fetch: client, Config: live, Auth: sessions, Metrics: m,
			Location: cfg.Location, Logger: log})
		if err != nil {
			return fmt.Errorf("serve: MCP server: %w", err)
		}
		mux.Handle("/mcp", h)
	}
	if err := mountConsole(mux, consoleDeps{st: st, q: q, client: client, live: live, sessions: sessions,
		loc: cfg.Location, configDir: cfg.ConfigDir, log: log, acquire: acquireAPI, corpus: corpora}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	public, err := portal.New(portal.Options{Store: st, Visits: visits, Log: log, Location: cfg.Location})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	mux.Handle("/", public)
	srv := newHTTPServer(auth.CrossOrigin(mux), log)
	addr := ln.Addr()
	served := make(chan error, 1)
	go func(ln net.Listener) { served <- srv.Serve(ln) }(ln)
	ln = nil // srv closes it
	// On SQLite this process holds the database alone: crawls a killed
	// predecessor left "running" go on now, not when River's rescuer would
	// notice them (the budget and more later).
	if n, err := q.TakeBackOrphans(ctx); err != nil {
		log.Warn("serve: jobs left running by a stopped process are taken back later", "err", err)
	} else if n > 0 {
		fmt.Fprintf(errw, "serve: 接管 %d 个上次未完成的任务 (taken back from a process that stopped)\n", n)
	}
	if err := q.Start(context.WithoutCancel(ctx)); err != nil {
		srv.Close()
		return fmt.Errorf("serve: %w", err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchConfig(watchCtx, live, cfg.Tick, hup, cfg.ConfigDir, log)
	}()
	ready.Store(true)
	acquireAt := ""
	if cfg.Acquire != nil {
		acquireAt = ", 获取 API /v1/ /v2/"
	}
	if cfg.MCP != nil {
		acquireAt += ", MCP /mcp"
	}
	fmt.Fprintf(errw, "serve: 已启动 — http://%s (公开门户 /, 透明账本 /ledger, 控制台 /admin/, API /api/v1/%s, healthz, readyz, metrics); %s 数据库; %d 个采集并发; 时区 %s\n",
		addr, acquireAt, st.Dialect(), cfg.Workers, cfg.Location)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		// The listener failed under us: say so and stop like on a signal,
		// exiting 1 so a supervisor sees it.
		fmt.Fprintf(errw, "serve: HTTP 服务出错，停止: %v\n", serveErr)
	}
	stopSignals() // a second signal now takes its default action
	ready.Store(false)
	fmt.Fprintf(errw, "serve: 收到停止信号 — 不再领取新任务，进行中的工作最多再等 %d 秒\n", int(stopGrace/time.Second))
	stopWatch()
	<-watched
	stopErr := q.Stop(stopGrace)
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		// Requests still open after the grace are cut; say so rather than
		// let a reader's broken page go unexplained.
		fmt.Fprintf(errw, "serve: 停止时仍有 HTTP 请求未完成，已断开: %v\n", err)
	}
	if stopErr != nil {
		fmt.Fprintf(errw, "serve: 停止时部分任务被中断（下次启动继续）: %v\n", stopErr)
	}
	if serveErr != nil {
		return fmt.Errorf("serve: http: %w", serveErr)
	}
	fmt.Fprintln(errw, "serve: 已停止；未完成的采集留在队列中，下次启动继续")
	return nil
}

// openStore opens the database, creating the data directory, the SQLite
// file and the schema (the job queue's tables included) when missing.
func openStore(ctx context.Context, url, dataDir string) (*store.Store, error) {
	st, err := store.Open(ctx, url, dataDir)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, configErrorf("open database: %w", err)
	}
	return st, nil
}
