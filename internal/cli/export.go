package cli

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/export"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// exampleCursor is what a cursor looks like, for the message that refuses
// a mistyped one.
const exampleCursor = "djF8MTc2MjA0MTYwMDAwMDAwMHw0Mg"

func init() { register(newExportCmd) }

func newExportCmd() *cobra.Command {
	var (
		opts    export.Options
		deptID  int64
		outFile string
		noMark  bool
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export articles for RAG as JSON Lines, incrementally",
		Long: `Export writes the articles changed since --since (a cursor printed by the
previous export) as JSON Lines: every field a search or RAG index reads, the
ids, the URL and the attachments' stored paths and sha256. Every line has the
same keys (docs/export.md); a value the article does not have is null. The order is stable;
running it again with the same cursor returns the same rows. The next cursor
is printed on stderr. Exported articles get exported_to_rag_at set.`,
		Example: `  zhizhi export > batch1.jsonl            # first export; note the cursor on stderr
  zhizhi export --since CURSOR > batch2.jsonl
  zhizhi export --dept 1001 --category 政策文件 --site-role qingyuan_local`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if c := opts.Filter.SinceCursor; c != "" && !store.ValidExportCursor(c) {
				return exitCode(2, fmt.Sprintf("export: --since %q is not an export cursor — pass the text the previous export printed after \"next cursor:\" on stderr (like %s), or leave --since out to export from the beginning", c, exampleCursor))
			}
			if opts.Filter.Status != "" && !model.Contains([]string{model.StatusRaw, model.StatusReady, model.StatusFailed}, opts.Filter.Status) {
				return exitCode(2, fmt.Sprintf("export: --status %q: use raw, ready or failed", opts.Filter.Status))
			}
			if opts.Filter.SiteRole != "" && !model.Contains(model.SiteRoles, opts.Filter.SiteRole) {
				return exitCode(2, fmt.Sprintf("export: --site-role %q: use one of %v", opts.Filter.SiteRole, model.SiteRoles))
			}
			if cmd.Flags().Changed("dept") {
				opts.Filter.DeptID = &deptID
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			w := cmd.OutOrStdout()
			var f *os.File
			if outFile != "" && outFile != "-" {
				f, err = os.Create(outFile)
				if err != nil {
					return exitCode(1, fmt.Sprintf("export: %v", err))
				}
				defer f.Close()
				w = f
			}
			bw := bufio.NewWriter(w)
			opts.Mark = !noMark
			opts.Now = time.Now().UTC()
			n, next, err := export.Write(ctx, st, opts, bw)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return exitCode(1, fmt.Sprintf("export: %v (%d lines written; resume with --since %s)", err, n, next))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "export: %d articles; next cursor: %s\n", n, next)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Filter.SinceCursor, "since", "", "cursor printed by the previous export")
	fl.StringVar(&opts.Filter.Status, "status", model.StatusReady, "article status: ready, raw or failed")
	fl.Int64Var(&deptID, "dept", 0, "only this local dept_id")
	fl.StringVar(&opts.Filter.Category, "category", "", "only this content_category")
	fl.StringVar(&opts.Filter.SiteRole, "site-role", "", "only sites of this role (qingyuan_local, county_local, province_ref, nation_ref)")
	fl.IntVar(&opts.Max, "limit", 0, "at most this many articles (0 = all)")
	fl.StringVarP(&outFile, "output", "o", "", "write to this file instead of stdout")
	fl.BoolVar(&noMark, "no-mark", false, "do not set exported_to_rag_at")
	return cmd
}
