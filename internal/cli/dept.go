package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	cmd.AddCommand(newDeptImportCmd(), newDeptListCmd())
	return cmd
}

func newDeptListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the departments in the database, the ones targets may bind to",
		Long: `List prints every department in local_department, one per line:

  DEPT_ID  DEPT_NAME  PARENT  STATE  ORDER

The database is where departments live: ` + "`zhizhi dept import`" + ` writes them there,
` + "`zhizhi config sync`" + ` accepts a local_dept_id only when it is there, and
` + "`zhizhi config lint`" + ` counts a department known when it is in
config/departments.csv or here. STATE is "active" or "inactive" as the OA
exported it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := store.Open(ctx, databaseURL(), settings.DataDir)
			if err != nil {
				return exitCode(1, err.Error())
			}
			defer st.Close()
			depts, err := st.ListDepartments(ctx)
			if err != nil {
				return exitCode(1, "dept list: "+err.Error())
			}
			out := cmd.OutOrStdout()
			if len(depts) == 0 {
				fmt.Fprintln(out, "no departments — import the OA's list with `zhizhi dept import FILE.csv`")
				return nil
			}
			t := table{header: []string{"DEPT_ID", "DEPT_NAME", "PARENT", "STATE", "ORDER"}}
			for _, d := range depts {
				parent, order, state := "-", "-", "inactive"
				if d.ParentDeptID != nil {
					parent = strconv.FormatInt(*d.ParentDeptID, 10)
				}
				if d.OrderID != nil {
					order = strconv.Itoa(*d.OrderID)
				}
				if d.State == 1 {
					state = "active"
				}
				t.add(strconv.FormatInt(d.DeptID, 10), d.DeptName, parent, state, order)
			}
			if err := t.write(out); err != nil {
				return err
			}
			fmt.Fprintf(out, "%d departments\n", len(depts))
			return nil
		},
	}
}

// databaseDepartments returns the dept_ids in the database for lint to
// count as known, or nil when no database can be looked at without making
// one: a SQLite file that does not exist yet is not created for a lint.
func databaseDepartments(ctx context.Context) map[int64]bool {
	if settings.DatabaseURL == "" {
		if _, err := os.Stat(filepath.Join(settings.DataDir, "zhizhi.db")); err != nil {
			return nil
		}
	}
	st, err := store.Open(ctx, databaseURL(), settings.DataDir)
	if err != nil {
		return nil
	}
	defer st.Close()
	depts, err := st.ListDepartments(ctx)
	if err != nil {
		return nil
	}
	ids := make(map[int64]bool, len(depts))
	for _, d := range depts {
		ids[d.DeptID] = true
	}
	return ids
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
