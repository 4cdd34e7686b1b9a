package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/store"
)

func init() { register(newDeptCmd) }

func newDeptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dept",
		Short: "Manage the local department subset (local_department)",
	}
	cmd.AddCommand(newDeptImportCmd())
	return cmd
}

func newDeptImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE.csv",
		Short: "Import the OA department subset from a CSV file (all rows or none)",
		Long: `Import reads a CSV of the OA's departments with a header line. Column
names may be the OA's upper case (DEPT_ID, DEPT_NAME, PARENT_DEPT_ID,
DEPT_LEVEL, DEPT_CODE, SHORT_NAME, FULL_NAME, STATE, ORDER_ID, UPDATED_AT) or
snake_case; DEPT_ID and DEPT_NAME are required, other columns are ignored.
The file may be UTF-8 (with or without BOM) or GBK/GB18030 as OA systems and
Excel export it; a file in any other encoding, or mixing the two, is refused
with the line to look at.

One bad row and nothing is imported: every bad line is listed with its number
and reason. Re-importing updates names and keeps dept_id (snapshot semantics).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			f, err := os.Open(path)
			if err != nil {
				return exitCode(1, fmt.Sprintf("dept import: cannot open %s: %v — check the path", path, err))
			}
			depts, lineErrs := config.ReadDepartmentsCSV(f, path)
			f.Close()
			if len(lineErrs) > 0 {
				lines := make([]string, len(lineErrs))
				for i, e := range lineErrs {
					lines[i] = e.Error()
				}
				return exitCode(1, strings.Join(lines, "\n")+
					fmt.Sprintf("\ndept import: %d bad line(s) in %s; nothing imported — fix them and run again", len(lineErrs), path))
			}
			ctx := cmd.Context()
			st, err := store.Open(ctx, databaseURL(), settings.DataDir)
			if err != nil {
				return exitCode(2, err.Error())
			}
			defer st.Close()
			created, updated, err := st.ImportDepartments(ctx, depts)
			if err != nil {
				return exitCode(1, fmt.Sprintf("dept import: %s: %v; nothing imported", path, err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "departments: %d read, %d created, %d updated, %d unchanged\n",
				len(depts), created, updated, len(depts)-created-updated)
			return nil
		},
	}
}
