package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
	"zhizhi/internal/config/zone"

	"github.com/spf13/cobra"

	"zhizhi/internal/adapter"
	"zhizhi/internal/alert"
	"zhizhi/internal/api"
	"zhizhi/internal/auth"
	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/fetch"
	"zhizhi/internal/health"
	"zhizhi/internal/ledger"
	"zhizhi/internal/metrics"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/portal"
	"zhizhi/internal/queue"
	"zhizhi/internal/review"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
	"zhizhi/internal/ui"
)

func init() { register(newServeCmd) }

// serveStopGrace bounds a graceful stop: jobs under way get the drain
// grace to finish what is in flight, then are cancelled.
const serveStopGrace = drainGrace + 5*time.Second

func newServeCmd() *cobra.Command {
	var (
		listen   string
		workers  int
		budget   time.Duration
		timezone string
		tick     time.Duration
		secure   bool

		clientIPHeader string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the crawler as a service: schedules, crawl workers, the public portal, the admin console and the REST API",
		Long: `Serve runs zhizhi as one long-running process: it crawls every enabled target
at its schedule_cron (read in --timezone), re-checks stored articles when they
are due, works the crawls asked for with 'zhizhi crawl --enqueue', and answers
HTTP on --listen:

  /admin/    the admin console (sign in with a user made by 'zhizhi user add')
  /api/v1/   the REST API (a session, or an API key from 'zhizhi apikey create'
             sent as "Authorization: Bearer …"); described by /api/v1/openapi.yaml
  /healthz   200 while the process runs
  /readyz    200 when the database answers and jobs are being worked, else 503
  /metrics   Prometheus metrics

Changes made in the console or the API refuse requests from other web sites
(cross-site requests); behind an HTTPS proxy, set --secure-cookies.

Work is kept as jobs in the database (River). After downtime a missed
schedule slot runs once, not once per missed slot; a crawl that was under way
when the process stopped or died goes on from where it was.

On the embedded SQLite database one serve process runs at a time. On
PostgreSQL any number of serve processes, on one or several machines, share
the work; the per-host politeness rules hold across all of them.

A 'zhizhi config sync' takes effect without a restart: every serve process
notices it within a minute, reads the configuration directory again and
uses the new sites, templates and politeness rules for the jobs that start
afterwards (jobs under way finish with what they started with). SIGHUP
reads the directory again at once, e.g. after editing a template. When the
files no longer load, serve keeps working with the last good configuration
and logs a warning naming the file and line (also shown by /readyz).

It logs one line per finished job (log level info unless --log-level or
ZHIZHI_LOG_LEVEL says otherwise).

SIGINT or SIGTERM stops it gracefully: no new jobs are taken, work in flight
gets up to 15 seconds, what was collected is kept and the unfinished crawls
stay queued for the next start; then it exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			loc, err := zone.Load(timezone)
			if err != nil {
				return exitCode(2, fmt.Sprintf("serve: --timezone / ZHIZHI_TIMEZONE %q is not a time zone (use a name like Asia/Shanghai or UTC)", timezone))
			}
			// One clock in the process: what reads the zone from the
			// environment (alert messages) shows the flag's zone too.
			if err := os.Setenv(zone.Env, timezone); err != nil {
				return exitCode(1, "serve: "+err.Error())
			}
			if workers < 1 || workers > 64 {
				return exitCode(2, fmt.Sprintf("serve: --workers %d: use 1 to 64", workers))
			}
			if budget < 10*time.Second {
				return exitCode(2, fmt.Sprintf("serve: --job-budget %s: use at least 10s", budget))
			}
			if clientIPHeader != "" && !validHeaderName(clientIPHeader) {
				return exitCode(2, fmt.Sprintf("serve: --client-ip-header / ZHIZHI_CLIENT_IP_HEADER %q is not a header name (use one like X-Real-IP or X-Forwarded-For)", clientIPHeader))
			}
			return runServe(cmd, serveOptions{listen: listen, workers: workers, budget: budget, loc: loc, tick: tick, secureCookies: secure,
				clientIPHeader: clientIPHeader})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", envOr("ZHIZHI_LISTEN", "127.0.0.1:8080"), "HTTP listen address (env ZHIZHI_LISTEN)")
	cmd.Flags().IntVar(&workers, "workers", queue.DefaultWorkers, "crawl jobs this process works at once")
	cmd.Flags().DurationVar(&budget, "job-budget", queue.DefaultBudget, "how long one crawl job works before it yields and goes on later")
	cmd.Flags().StringVar(&timezone, "timezone", envOr("ZHIZHI_TIMEZONE", queue.DefaultTimeZone), "time zone of schedule_cron (env ZHIZHI_TIMEZONE)")
	cmd.Flags().BoolVar(&secure, "secure-cookies", envOr("ZHIZHI_SECURE_COOKIES", "") == "true",
		"send the console's session cookie over HTTPS only — set it when people reach the console through HTTPS (env ZHIZHI_SECURE_COOKIES=true)")
	cmd.Flags().StringVar(&clientIPHeader, "client-ip-header", envOr("ZHIZHI_CLIENT_IP_HEADER", ""),
		"behind a reverse proxy: the header it puts the reader's address in (X-Real-IP, X-Forwarded-For), for the portal's visitors and the console's login limit, read only on requests from the proxy on this machine or the private network (env ZHIZHI_CLIENT_IP_HEADER)")
	cmd.Flags().DurationVar(&tick, "tick", queue.DefaultTickEvery, "how often the schedule is looked at")
	_ = cmd.Flags().MarkHidden("tick")
	return cmd
}

type serveOptions struct {
	listen  string
	workers int
	budget  time.Duration
	loc     *time.Location
	tick    time.Duration
	// secureCookies marks the console's session cookie Secure, for a
	// console served over HTTPS (behind a TLS-terminating proxy).
	secureCookies bool
	// clientIPHeader names the header a reverse proxy puts a reader's
	// address in; "" counts portal visitors by the connection's peer.
	clientIPHeader string
}

// validHeaderName reports whether s can be an HTTP header name.
func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return s != ""
}

func runServe(cmd *cobra.Command, o serveOptions) error {
	if err := needConfigDir(settings.ConfigDir); err != nil {
		return err
	}
	errw := cmd.ErrOrStderr()
	// A service's log is what its operator reads: one line per finished
	// job (info), unless a level was asked for.
	if !cmd.Flags().Changed("log-level") && os.Getenv("ZHIZHI_LOG_LEVEL") == "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelInfo})))
	}
	ctx, stopSignals := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// SIGHUP reads the configuration again; caught from the start so that
	// one sent while serve starts does not end it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	st, err := createStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	release, err := st.LockServe(ctx)
	if err != nil {
		if errors.Is(err, store.ErrServeRunning) {
			return exitCode(1, fmt.Sprintf("serve: %v (%s) — stop it first, or use PostgreSQL (ZHIZHI_DATABASE_URL=postgres://…) to run several", err, databaseURL()))
		}
		return exitCode(1, "serve: "+err.Error())
	}
	defer release()
	// The generation is read before the files: a sync in between is seen
	// at the first check and read again.
	generation, err := st.ConfigGeneration(ctx)
	if err != nil {
		return exitCode(1, "serve: "+err.Error())
	}
	b, err := loadBundle()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return exitCode(1, fmt.Sprintf("serve: cannot listen on %s (--listen / ZHIZHI_LISTEN): %v", o.listen, err))
	}
	// Alerts follow alerts.yaml as the configuration is read again (SIGHUP,
	// `config sync`); without the file nothing is raised until it appears.
	alerter := &alert.Alerter{Store: st}
	if err := alerter.Reconfigure(b.Alerts); err != nil {
		ln.Close()
		return exitCode(2, "serve: "+err.Error())
	}
	var q *queue.Queue
	m := metrics.New(metrics.Options{Store: st, Logger: slog.Default(),
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
	client, err := newObservedClient(ctx, st, b, m.ObserveRequest)
	if err != nil {
		ln.Close()
		return err
	}
	defer client.Close() // stops Chromium and removes its profile
	live, err := liveConfig(st, b, generation, client, alerter)
	if err != nil {
		ln.Close()
		return err
	}
	cards, err := crawl.LoadCardIndex(ctx, st)
	if err != nil {
		ln.Close()
		return exitCode(1, "serve: "+err.Error())
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
			slog.Info("serve: cards of stored articles stopped with serve; the next start goes on", "made", n)
		case err != nil:
			slog.Warn("serve: cards of stored articles not all made; the next start goes on", "made", n, "err", err)
		case n > 0:
			slog.Info("serve: cards made for stored articles", "made", n)
		}
	}()
	defer func() {
		stopBackfill()
		<-backfilled
	}()
	// The portal's visits, counted per visitor for BotScore; what is
	// buffered is written when serve stops.
	recOpts := ledger.RecorderOptions{Log: slog.Default()}
	if o.clientIPHeader != "" {
		recOpts.ClientIP = ledger.ProxiedAddress(o.clientIPHeader)
	}
	visits := ledger.NewRecorder(st, recOpts)
	defer func() {
		if err := visits.Close(); err != nil {
			slog.Error("serve: portal visits not written", "err", err)
		}
	}()
	sealer := &ledger.Sealer{Store: st, Human: humanLedger(st)}
	host, _ := os.Hostname()
	// The process's id in the queue and its heartbeat row: a restart with
	// the same pid (a container's pid 1) is another process, whose
	// predecessor's jobs must still be taken back.
	workerID := fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.N(0x10000))
	q, err = queue.Open(ctx, queue.Options{
		Store: st, Fetch: client, CurrentBundle: live.Current, Workers: o.workers, Budget: o.budget, TickEvery: o.tick,
		Location: o.loc, Log: slog.Default(), ID: workerID, Alerter: alerter, Cards: cards,
		Onboard: onboardWizard(client, live),
		Seal: func(ctx context.Context) error {
			sealed, err := sealer.SealDue(ctx)
			for _, day := range sealed {
				slog.Info("ledgers sealed", "day", day)
			}
			return err
		},
		OnResult: func(ctx context.Context, kind string, t model.Target, r crawl.Result, wait time.Duration) {
			logTargetResult(kind, t, r)
			if kind == queue.KindCrawl {
				if err := crawl.RecordRun(ctx, st, t, r, "serve "+workerID); err != nil {
					slog.Warn("record the run of a target", "target", t.TargetCode, "err", err)
				}
			}
			m.ObserveCrawl(r)
			m.ObserveJob(kind, wait, r.Finished.Sub(r.Started), jobOutcomeLabel(r))
		},
	})
	if err != nil {
		ln.Close()
		return exitCode(1, "serve: "+err.Error())
	}
	var ready atomic.Bool
	mux := serveMux(st, &ready, live.Failure)
	mux.Handle("GET /metrics", m.Handler())
	if err := mountConsole(mux, consoleDeps{st: st, q: q, client: client, live: live, loc: o.loc, secureCookies: o.secureCookies,
		clientIPHeader: o.clientIPHeader}); err != nil {
		ln.Close()
		return exitCode(1, "serve: "+err.Error())
	}
	public, err := portal.New(portal.Options{Store: st, Visits: visits, Log: slog.Default(), Location: o.loc})
	if err != nil {
		ln.Close()
		return exitCode(1, "serve: "+err.Error())
	}
	mux.Handle("/", public)
	srv := newHTTPServer(auth.CrossOrigin(mux))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// On SQLite this process holds the database alone: crawls a killed
	// predecessor left "running" go on now, not when River's rescuer would
	// notice them (the budget and more later).
	if n, err := q.TakeBackOrphans(ctx); err != nil {
		slog.Warn("serve: jobs left running by a stopped process are taken back later", "err", err)
	} else if n > 0 {
		fmt.Fprintf(errw, "serve: 接管 %d 个上次未完成的任务 (taken back from a process that stopped)\n", n)
	}
	if err := q.Start(context.WithoutCancel(ctx)); err != nil {
		srv.Close()
		return exitCode(1, "serve: "+err.Error())
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchConfig(watchCtx, live, o.tick, hup)
	}()
	ready.Store(true)
	fmt.Fprintf(errw, "serve: 已启动 — http://%s (公开门户 /, 透明账本 /ledger, 控制台 /admin/, API /api/v1/, healthz, readyz, metrics); %s 数据库; %d 个采集并发; 时区 %s\n",
		ln.Addr(), st.Dialect(), o.workers, o.loc)
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
	fmt.Fprintf(errw, "serve: 收到停止信号 — 不再领取新任务，进行中的工作最多再等 %d 秒\n", int(serveStopGrace/time.Second))
	stopWatch()
	<-watched
	stopErr := q.Stop(serveStopGrace)
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
		return exitCode(1, "serve: http: "+serveErr.Error())
	}
	fmt.Fprintln(errw, "serve: 已停止；未完成的采集留在队列中，下次启动继续")
	return nil
}

// newHTTPServer is serve's HTTP server. Every phase of a connection has a
// limit, so a client that sends slowly or never reads cannot hold a
// connection and its goroutine forever. The write limit is generous: the
// slowest answers are the console's dry-runs and previews, which fetch a
// site at its polite rate while the page waits.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,     // bodies are forms, CSV and YAML uploads
		WriteTimeout:      5 * time.Minute, // a dry-run at one request every few seconds
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}

// consoleDeps is what the admin console and the API work with.
type consoleDeps struct {
	st            *store.Store
	q             *queue.Queue
	client        *fetch.Client // the polite client the crawl workers use
	live          *config.Live
	loc           *time.Location // schedules are read in it
	secureCookies bool
	// clientIPHeader is the proxy's header with the client's address, read
	// by the login limit as the portal reads it ("" for none).
	clientIPHeader string
}

// mountConsole adds the admin console (/admin/) and the REST API
// (/api/v1/) to mux, both signed in through the same users, sessions and
// API keys; / leads to the console.
func mountConsole(mux *http.ServeMux, d consoleDeps) error {
	st := d.st
	sessions := auth.New(st, auth.Options{CookieSecure: d.secureCookies, ClientIPHeader: d.clientIPHeader})
	// Saving a target with a sample article needs a green dry-run, made
	// with the workers' own polite client and the configuration in force.
	// A catalog column's preview reads its list the same way.
	crawler := func(ctx context.Context) *crawl.Crawler {
		return &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: d.client, Bundle: d.live.Current(ctx), Log: slog.Default()}
	}
	targets := &target.Service{Store: st, Location: d.loc,
		Validate: func(ctx context.Context, site *model.Site, t *model.Target, entry, sample string) (*crawl.Validation, error) {
			return crawler(ctx).Validate(ctx, site, t, entry, sample)
		},
		List: func(ctx context.Context, site *model.Site, t *model.Target) ([]adapter.ListItem, error) {
			return crawler(ctx).PreviewColumn(ctx, site, t)
		}}
	mux.Handle(api.Prefix+"/", api.New(api.Options{Store: st, Auth: sessions, Log: slog.Default(), Targets: targets, Cards: review.Grade,
		CrawlNow: func(ctx context.Context, targetID int64) error {
			t, err := st.TargetByID(ctx, targetID)
			if err != nil {
				return err
			}
			_, err = d.q.CrawlNow(ctx, *t)
			return err
		}}))
	console, err := ui.New(ui.Options{Store: st, Sessions: sessions, Jobs: d.q, ConfigDir: settings.ConfigDir, Log: slog.Default(),
		Targets: targets, Cards: review.Grade, Location: d.loc,
		Onboard: onboardWizard(d.client, d.live)})
	if err != nil {
		return fmt.Errorf("admin console: %w", err)
	}
	mux.Handle(ui.Prefix+"/", console)
	return nil
}

// onboardWizard gives the onboarding wizard as the console checks it and
// the queue's workers run it: the polite client the crawl workers use and
// the configuration in force.
func onboardWizard(client *fetch.Client, live *config.Live) func(ctx context.Context) (*onboard.Wizard, error) {
	return func(ctx context.Context) (*onboard.Wizard, error) {
		return &onboard.Wizard{Fetch: client, Bundle: live.Current(ctx)}, nil
	}
}

// serveMux answers /healthz, /readyz and /metrics. configTrouble says why
// the configuration directory did not load at the last reload ("" when it
// did); it does not make serve unready, which goes on with the last good
// one.
func serveMux(st *store.Store, ready *atomic.Bool, configTrouble func() string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: job queue not running (starting or stopping)")
			return
		}
		if err := st.DB().PingContext(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: database does not answer: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ready")
		if msg := configTrouble(); msg != "" {
			fmt.Fprintf(w, "configuration: the last reload failed, still working with the last good one: %s\n", msg)
		}
	})
	return mux
}

// jobOutcomeLabel is a job's outcome as the metrics count it.
func jobOutcomeLabel(r crawl.Result) string {
	switch {
	case r.Interrupted:
		return "interrupted"
	case r.Blocked != "":
		return "blocked"
	case r.Err != nil:
		return "failed"
	case r.Failed > 0:
		return "partial"
	}
	return "ok"
}

// logTargetResult writes one log line per finished job.
func logTargetResult(kind string, t model.Target, r crawl.Result) {
	args := []any{"job", kind, "target", t.TargetCode, "created", r.Created, "updated", r.Updated,
		"unchanged", r.Unchanged, "failed", r.Failed, "pending", r.Pending, "took", r.Finished.Sub(r.Started).Round(time.Millisecond)}
	switch {
	case r.Interrupted:
		slog.Info("job paused, goes on later", args...)
	case r.Err != nil:
		slog.Warn("job failed", append(args, "err", r.Err)...)
	default:
		slog.Info("job done", args...)
	}
}
