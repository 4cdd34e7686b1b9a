// Package cli is zhizhi's command line: one file per subcommand, settings
// from environment variables with flags for one-off overrides.
package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"zhizhi/internal/config/zone"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X zhizhi/internal/cli.Version=…".
var Version = "0.1.0-dev"

// Settings are the process-wide settings every command shares.
type Settings struct {
	DatabaseURL string
	DataDir     string
	ConfigDir   string
	Resolve     string
	ContactURL  string
	Chromium    string
	LogLevel    string
}

var settings Settings

// commands registered by the files of this package, each in its own init.
var commands []func() *cobra.Command

func register(f func() *cobra.Command) { commands = append(commands, f) }

// exitError carries an exit code to Execute without printing twice.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode returns an error that makes the process exit with code, printing
// msg (if any) to stderr.
func exitCode(code int, msg string) error { return &exitError{code: code, msg: msg} }

const envHelp = `Environment (flags override them for one run):
  ZHIZHI_DATABASE_URL  database; default sqlite file <data dir>/zhizhi.db;
                       postgres://user@host:port/db selects PostgreSQL
  ZHIZHI_DATA_DIR      data directory (database, blobs); default ./data
  ZHIZHI_CONFIG_DIR    configuration directory (cms/, sites/,
                       topic_synonyms.yaml, departments.csv, alerts.yaml);
                       no default: set it, or write one with 'zhizhi init
                       DIR'. 'zhizhi demo' uses its own (ZHIZHI_DEMO_DIR)
  ZHIZHI_RESOLVE       host=ip:port,… pins hosts to addresses, like curl
                       --resolve; only hosts listed here may reach loopback
  ZHIZHI_LISTEN        where zhizhi serve answers HTTP (default
                       127.0.0.1:8080) and zhizhi sim listens (default
                       127.0.0.1:0, free ports)
  ZHIZHI_TIMEZONE      time zone schedules are read in and every time is shown
                       in (CLI, console, portal, alerts); default
                       Asia/Shanghai. JSON and exports carry RFC 3339 offsets
  ZHIZHI_SECURE_COOKIES  true: the console's session cookie goes over HTTPS
                       only (set it behind an HTTPS proxy)
  ZHIZHI_CLIENT_IP_HEADER  behind a reverse proxy: the header with the
                       reader's address (X-Real-IP, X-Forwarded-For), so the
                       portal tells its visitors apart and the console's
                       login limit counts each client
  ZHIZHI_CONTACT_URL   contact URL in the User-Agent; default
                       https://zhizhi.example/contact
  ZHIZHI_CHROMIUM      path of the chromium binary; default /usr/bin/chromium
  ZHIZHI_LOG_LEVEL     debug, info, warn or error; default warn
`

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "zhizhi",
		Short: "zhizhi (知止) — a polite crawler for government public-information columns",
		Long: `zhizhi (知止, "know where to stop") collects the public-information columns of
government portals, column by column, each bound to the department that owns
it, politely: honest User-Agent, robots.txt fail-closed, one request in flight
per host.

` + envHelp,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints exactly what `zhizhi version` prints.
	root.SetVersionTemplate(versionLine())
	pf := root.PersistentFlags()
	pf.StringVar(&settings.DatabaseURL, "database-url", os.Getenv("ZHIZHI_DATABASE_URL"), "database URL (env ZHIZHI_DATABASE_URL)")
	pf.StringVar(&settings.DataDir, "data-dir", envOr("ZHIZHI_DATA_DIR", "./data"), "data directory (env ZHIZHI_DATA_DIR)")
	pf.StringVar(&settings.ConfigDir, "config-dir", os.Getenv("ZHIZHI_CONFIG_DIR"), "configuration directory; no default (env ZHIZHI_CONFIG_DIR; 'zhizhi init DIR' writes one)")
	pf.StringVar(&settings.Resolve, "resolve", os.Getenv("ZHIZHI_RESOLVE"), "host=ip:port,… resolve map (env ZHIZHI_RESOLVE)")
	pf.StringVar(&settings.ContactURL, "contact-url", envOr("ZHIZHI_CONTACT_URL", "https://zhizhi.example/contact"), "contact URL for the User-Agent (env ZHIZHI_CONTACT_URL)")
	pf.StringVar(&settings.Chromium, "chromium", envOr("ZHIZHI_CHROMIUM", "/usr/bin/chromium"), "chromium binary (env ZHIZHI_CHROMIUM)")
	pf.StringVar(&settings.LogLevel, "log-level", envOr("ZHIZHI_LOG_LEVEL", "warn"), "log level: debug, info, warn, error (env ZHIZHI_LOG_LEVEL)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(settings.LogLevel)); err != nil {
			return exitCode(2, fmt.Sprintf("--log-level / ZHIZHI_LOG_LEVEL %q: use debug, info, warn or error", settings.LogLevel))
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
		// Every time the command line shows is in this zone; a bad name is
		// refused before any is shown in another.
		if _, err := zone.FromEnv(); err != nil {
			return exitCode(2, err.Error())
		}
		return nil
	}
	for _, f := range commands {
		root.AddCommand(f())
	}
	usageErrorsExit2(root)
	return root
}

// usageErrorsExit2 makes a bad flag or a wrong number of arguments exit 2,
// like the commands' own usage checks, so a script can tell "called
// wrongly" from "the work failed".
func usageErrorsExit2(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitCode(2, fmt.Sprintf("%s: %v — see '%s --help'", c.CommandPath(), err, c.CommandPath()))
	})
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return exitCode(2, fmt.Sprintf("%s: %v — see '%s --help'", c.CommandPath(), err, c.CommandPath()))
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageErrorsExit2(sub)
	}
}

// databaseURL returns the configured database URL, defaulting to an SQLite
// file under the data directory.
func databaseURL() string {
	if settings.DatabaseURL != "" {
		return settings.DatabaseURL
	}
	return "sqlite://" + filepath.Join(settings.DataDir, "zhizhi.db")
}

// Execute runs the command line and exits with its status.
func Execute() {
	root := newRootCmd()
	err := root.Execute()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "zhizhi: "+err.Error())
	os.Exit(1)
}
