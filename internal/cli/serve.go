package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/queue"
	"zhizhi/internal/server"
)

func init() { register(newServeCmd) }

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
  /v1/ /v2/  the acquisition API: POST /v1/fetch (and Firecrawl's POST
             /v2/scrape) fetches one page now, politely, as Markdown;
             GET /v1/usage shows the key's budgets. It needs a key with
             the acquire scope (or an operator's console session); each
             key has daily budgets ('zhizhi apikey budget')
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

// runServe runs the service (internal/server) with the process's settings
// and o, until SIGINT or SIGTERM; a configuration it cannot start with
// exits 2, any other failure 1.
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
	rm, err := resolveMap()
	if err != nil {
		return err
	}
	acq, mcpH := serveAPIs()
	err = server.Run(cmd.Context(), server.Config{
		DatabaseURL: databaseURL(), DataDir: settings.DataDir, ConfigDir: settings.ConfigDir,
		Client: clientOptions(rm),
		Listen: o.listen, Workers: o.workers, JobBudget: o.budget, Tick: o.tick, Location: o.loc,
		SecureCookies: o.secureCookies, ClientIPHeader: o.clientIPHeader,
		Acquire: acq, MCP: mcpH,
		Stderr: errw, Logger: slog.Default(),
	})
	var bad *server.ConfigError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return exitCode(2, err.Error())
	}
	return exitCode(1, err.Error())
}
