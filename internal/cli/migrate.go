package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newMigrateCmd) }

func newMigrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the database schema",
		Long: `Migrate opens the database named by ZHIZHI_DATABASE_URL (default: an SQLite
file under ZHIZHI_DATA_DIR) and applies every pending migration, the job queue's tables included. Every other
command that opens the database does the same automatically; this command
exists to do it on purpose and to report the schema version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := createStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// createStore has applied every pending migration already, the
			// job queue's included.
			v, err := st.SchemaVersion(ctx)
			if err != nil {
				return exitCode(1, err.Error())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "migrate: %s database at schema version %d, no migration pending\n", st.Dialect(), v)
			return nil
		},
	}
}
