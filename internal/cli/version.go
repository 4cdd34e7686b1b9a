package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

// versionLine is the one line both `zhizhi version` and `zhizhi --version`
// print.
func versionLine() string {
	return fmt.Sprintf("zhizhi %s (%s)\n", Version, runtime.Version())
}
