package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

func init() { register(newCrawlCmd) }

func newCrawlCmd() *cobra.Command {
	var all, full bool
	var siteCode, targetCode string
	cmd := &cobra.Command{
		Use:   "crawl (--all | --site CODE | --target CODE)",
		Short: "Crawl targets now: lists, new and changed articles, attachments",
		Long: `Crawl collects the enabled targets in the database (run 'zhizhi config sync'
first) politely: robots.txt, one request in flight per host, the token bucket,
backoff and breaker all apply. It shows progress on stderr and prints a table
per target at the end. It exits 1 when any target failed, naming the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{all, siteCode != "", targetCode != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return exitCode(2, "crawl: give exactly one of --all, --site CODE or --target CODE")
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			b, err := loadBundle()
			if err != nil {
				return err
			}
			targets, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: siteCode, TargetCode: targetCode, EnabledOnly: true})
			if err != nil {
				return exitCode(1, err.Error())
			}
			if len(targets) == 0 {
				what := "no enabled targets in the database"
				switch {
				case siteCode != "":
					what = fmt.Sprintf("site %q has no enabled targets", siteCode)
				case targetCode != "":
					what = fmt.Sprintf("target %q is not in the database or is disabled", targetCode)
				}
				return exitCode(1, "crawl: "+what+" — run `zhizhi config sync` (and `zhizhi target list` to see them)")
			}
			results, err := runCrawl(cmd, st, b, targets, full)
			if err != nil {
				return err
			}
			crawl.WriteTable(cmd.OutOrStdout(), results)
			failed := 0
			for _, r := range results {
				if r.Err != nil {
					failed++
				}
			}
			if failed > 0 {
				return exitCode(1, fmt.Sprintf("crawl: %d of %d targets failed (reasons above)", failed, len(results)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every enabled target")
	cmd.Flags().StringVar(&siteCode, "site", "", "the enabled targets of one site")
	cmd.Flags().StringVar(&targetCode, "target", "", "one target")
	cmd.Flags().BoolVar(&full, "full", false, "walk every list page (up to the page limit) instead of stopping at articles already known; still fetches only new and due articles")
	return cmd
}

// runCrawl crawls targets with a progress line on stderr.
func runCrawl(cmd *cobra.Command, st *store.Store, b *config.Bundle, targets []model.Target, full bool) ([]crawl.Result, error) {
	ctx := cmd.Context()
	client, err := newClient(ctx, st, b)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	prog := &crawl.Progress{W: cmd.ErrOrStderr(), TTY: isTerminal(cmd.ErrOrStderr()), Total: len(targets)}
	c := &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: client, Bundle: b, Progress: prog.Event, Full: full}
	results := c.Run(ctx, targets)
	prog.Finish()
	return results, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
