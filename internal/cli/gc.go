package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/crawl"
)

func init() { register(newGCCmd) }

func newGCCmd() *cobra.Command {
	var grace time.Duration
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove stored files (raw HTML, text, attachments) that no article refers to any more",
		Long: `gc removes the stored files (raw HTML, text, attachments) that no article or
attachment row refers to: files left behind when a crawl was killed between
writing a file and storing its row, or whose article was replaced by a newer
version with other content. With SQLite the stored files are under the data
directory's blobs/; with PostgreSQL they are in the database, and gc also
collects the files an older zhizhi left under this machine's blobs/. Files
stored (or stored again) within the grace period stay, because a crawl that
is running writes its files just before the rows that refer to them; the leftovers of
interrupted writes (.tmp-*) older than the grace period go too. Run it while
no crawl is running to be safe, or keep the default grace. gc also deletes the
acquisition API's crawl jobs that ended and whose results expired (24 hours
after their start), with their pages (not with --dry-run).

Exit codes: 0 done, 1 the database or the data directory could not be read
while collecting, 2 usage error or no zhizhi database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if grace < 0 {
				return exitCode(2, "gc: --grace must not be negative")
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// Crawl jobs of the acquisition API whose results expired
			// (24 hours after their start) are answered 404 already;
			// their rows and documents go now.
			jobs := 0
			if !dryRun {
				if jobs, err = st.DeleteExpiredCrawlJobs(ctx, time.Now()); err != nil {
					return exitCode(1, "gc: "+err.Error())
				}
			}
			refs, err := st.BlobRefs(ctx)
			if err != nil {
				return exitCode(1, "gc: "+err.Error())
			}
			res, err := st.Blobs().GC(ctx, refs, time.Now().Add(-grace), dryRun)
			if err != nil {
				return exitCode(1, "gc: "+err.Error())
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "gc: %d files in use kept; %s %d unreferenced files (%s) and %d interrupted writes; %d unreferenced files younger than %s kept\n",
				res.Kept, verb, res.Removed, crawl.HumanBytes(res.RemovedBytes), res.Temporary, res.Young, grace)
			if jobs > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "gc: removed %d expired crawl jobs of the acquisition API\n", jobs)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", time.Hour, "keep unreferenced files younger than this")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "count what would be removed, remove nothing")
	return cmd
}
