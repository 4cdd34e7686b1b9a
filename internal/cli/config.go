package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/store"
)

func init() { register(newConfigCmd) }

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check and load the configuration files (cms/, sites/, topic_synonyms.yaml, alerts.yaml)",
	}
	cmd.AddCommand(newConfigLintCmd(), newConfigSyncCmd())
	return cmd
}

func newConfigLintCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Report every problem in the configuration as file:line:column, exit 1 on any error",
		Long: `Lint reads the configuration directory (default $ZHIZHI_CONFIG_DIR) and reports
every problem at once, one per line as

  path:line:column: what is wrong — what to do

A site may say owned: true (looser politeness limits) only when ZHIZHI_RESOLVE
(--resolve) maps its host to a loopback address: a site running on this
machine, such as the simulated web.

Warnings are printed as "…: warning: …" and do not change the exit status.
Exit status 1 when there is any error, 0 when the configuration is clean.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = settings.ConfigDir
			}
			b, problems, err := loadConfigWith(dir, databaseDepartments(cmd.Context()))
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			printProblems(out, problems)
			if config.HasErrors(problems) {
				return exitCode(1, fmt.Sprintf("config lint: %d error(s) in %s", len(config.Errors(problems)), dir))
			}
			sites, targets, adapters := b.Counts()
			fmt.Fprintf(out, "ok: %d sites, %d targets, %d adapters\n", sites, targets, adapters)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "configuration directory (default: --config-dir / ZHIZHI_CONFIG_DIR)")
	return cmd
}

func newConfigSyncCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Lint the configuration, then write its sites, departments and targets to the database",
		Long: `Sync lints the configuration and refuses to write anything when it has errors.
Otherwise it upserts crawl_site, site_department and crawl_target rows
(source=yaml) in one transaction and disables — never deletes — the yaml
targets no longer in the files. Each target's schedule_cron is assigned from a
hash of its target_code inside 01:00–04:59. Running it twice changes nothing
the second time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = settings.ConfigDir
			}
			out := cmd.OutOrStdout()
			b, problems, err := loadConfigWith(dir, databaseDepartments(cmd.Context()))
			if err != nil {
				return err
			}
			printProblems(out, problems)
			if config.HasErrors(problems) {
				return exitCode(1, fmt.Sprintf("config sync: %d error(s) in %s; nothing written — fix them (see `zhizhi config lint`)",
					len(config.Errors(problems)), dir))
			}
			ctx := cmd.Context()
			st, err := store.Open(ctx, databaseURL(), settings.DataDir)
			if err != nil {
				return exitCode(2, err.Error())
			}
			defer st.Close()
			rep, err := configsync.Sync(ctx, st, b)
			if err != nil {
				return exitCode(1, err.Error())
			}
			fmt.Fprintln(out, rep.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "configuration directory (default: --config-dir / ZHIZHI_CONFIG_DIR)")
	return cmd
}

func printProblems(w io.Writer, problems []config.Problem) {
	for _, p := range problems {
		fmt.Fprintln(w, p.String())
	}
}
