package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

func init() { register(newCrawlCmd) }

func newCrawlCmd() *cobra.Command {
	var all, full, enqueue, retryFailed bool
	var siteCode, targetCode string
	cmd := &cobra.Command{
		Use:   "crawl (--all | --site CODE | --target CODE)",
		Short: "Crawl targets now: lists, new and changed articles, attachments",
		Long: `Crawl collects the enabled targets in the database (run 'zhizhi config sync'
first) politely: robots.txt, one request in flight per host, the token bucket,
backoff and breaker all apply. It shows progress on stderr and prints a table
per target at the end.

With --enqueue it crawls nothing itself: the crawls are queued in the
database, ahead of every scheduled one, for 'zhizhi serve' to work. A target
whose crawl is already waiting is moved to the front; one whose crawl is
running is left alone.

Ctrl-C (SIGINT) or SIGTERM stops it gracefully: no new work starts, requests
under way get up to 10 seconds to finish, what was collected is kept, the
table so far is printed and the browser is stopped. A second Ctrl-C stops at
once. Run it again to go on.

An article whose fetch failed is tried again on its own schedule: 5, 10, 20
and 40 minutes after a passing fault of the site (5xx, 429, the network), then
1 h, 2 h, 4 h … at most 7 days apart; other failures start at 1 h. The table
lists the articles that wait for a retry and when. --retry-failed makes them
due now and fetches them in this run (host limits and backoff still apply).

` + crawlExitHelp,
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
			intr := watchInterrupt(cmd.Context(), cmd.ErrOrStderr())
			defer intr.Stop()
			ctx := intr.ctx
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
				return exitCode(2, "crawl: "+what+" — run `zhizhi config sync` (and `zhizhi target list` to see them)")
			}
			if retryFailed {
				ids := make([]int64, len(targets))
				for i, t := range targets {
					ids[i] = t.ID
				}
				n, err := st.RetryFailedNow(ctx, ids, time.Now())
				if err != nil {
					return exitCode(1, "crawl --retry-failed: "+err.Error())
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "crawl: %d 篇失败的文章现在重试 (failed articles due now)\n", n)
			}
			if enqueue {
				if full {
					return exitCode(2, "crawl: --full and --enqueue do not go together (a queued crawl walks the lists as a scheduled one does)")
				}
				return enqueueCrawls(ctx, st, targets, cmd.OutOrStdout())
			}
			results, err := runCrawl(cmd, intr, st, b, targets, full, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return crawlStatus("crawl", results, intr.Interrupted())
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every enabled target")
	cmd.Flags().StringVar(&siteCode, "site", "", "the enabled targets of one site")
	cmd.Flags().StringVar(&targetCode, "target", "", "one target")
	cmd.Flags().BoolVar(&enqueue, "enqueue", false, "do not crawl here: queue the crawls ahead of the scheduled ones for a running 'zhizhi serve' to do")
	cmd.Flags().BoolVar(&retryFailed, "retry-failed", false, "try the articles whose fetch failed now instead of at their retry time")
	cmd.Flags().BoolVar(&full, "full", false, "walk every list page (up to the page limit) instead of stopping at articles already known; still fetches only new and due articles")
	return cmd
}

// enqueueCrawls queues an urgent crawl of each target and says what
// happened to each.
func enqueueCrawls(ctx context.Context, st *store.Store, targets []model.Target, out io.Writer) error {
	q, err := queue.Open(ctx, queue.Options{Store: st})
	if err != nil {
		return exitCode(1, "crawl --enqueue: "+err.Error())
	}
	defer q.Close()
	tw := &table{header: []string{"TARGET_CODE", "任务 JOB", "状态 STATE"}}
	for _, t := range targets {
		e, err := q.CrawlNow(ctx, t)
		if err != nil {
			tw.write(out)
			return exitCode(1, "crawl --enqueue: "+err.Error())
		}
		state := "已加入队列，排在定时任务之前 (queued first)"
		switch {
		case e.Running:
			state = "正在采集，未重复加入 (already running)"
		case e.Moved:
			state = "已提前到队首 (moved to the front)"
		}
		tw.add(t.TargetCode, fmt.Sprint(e.JobID), state)
	}
	tw.write(out)
	fmt.Fprintf(out, "%d 个栏目已排队；由运行中的 zhizhi serve 执行 (a running `zhizhi serve` works them)\n", len(targets))
	return nil
}

// crawlExitHelp documents the exit status of the commands that crawl.
const crawlExitHelp = `Exit status:
  0    every target asked for was crawled and every article stored (a column
       that robots.txt forbids counts as done: zhizhi obeyed it)
  1    a target or at least one article failed, or an article still waits
       for a retry (it is missing until then); they are listed
  2    usage or configuration error (bad flags, broken configuration, an
       unknown target or site); nothing was crawled. Also: could not
       finish because the database stayed unreachable for 2 minutes (a
       shorter outage is waited out and the crawl goes on)
  130  interrupted by Ctrl-C or SIGTERM; what was collected is kept`

// runCrawl crawls targets with a progress line on stderr, taking no new
// work once intr drains, and prints the table of what was done to out
// before it stops the browser.
func runCrawl(cmd *cobra.Command, intr *interrupt, st *store.Store, b *config.Bundle, targets []model.Target, full bool, out io.Writer) ([]crawl.Result, error) {
	ctx := intr.ctx
	client, err := newClient(ctx, st, b)
	if err != nil {
		return nil, err
	}
	defer client.Close() // stops Chromium and removes its profile
	prog := &crawl.Progress{W: cmd.ErrOrStderr(), TTY: isTerminal(cmd.ErrOrStderr()), Total: len(targets)}
	cards, err := crawl.LoadCardIndex(ctx, st)
	if err != nil {
		return nil, err
	}
	if n, err := crawl.BackfillCards(ctx, st, cards); err != nil {
		return nil, err
	} else if n > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "crawl: 为 %d 篇已存文章生成了摘要卡 (cards made for stored articles)\n", n)
	}
	c := &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: client, Bundle: b, Progress: prog.Event, Drain: intr.Drain, Full: full, Cards: cards}
	results := c.Run(ctx, targets)
	prog.Finish()
	// Every target's run is recorded, so health sees the last result
	// whoever crawled it; a record that cannot be written is no reason to
	// hide the table.
	for i, r := range results {
		if err := crawl.RecordRun(ctx, st, targets[i], r, "cli"); err != nil {
			slog.Warn("record crawl run", "target", r.TargetCode, "error", err)
		}
	}
	crawl.WriteTable(out, results)
	return results, nil
}

// crawlStatus is the exit status of a crawl: 130 when it was interrupted,
// 1 when any target or article failed (naming them), nil when everything
// asked for was done.
func crawlStatus(name string, results []crawl.Result, interrupted bool) error {
	var failed []string
	done, stopped := 0, 0
	for _, r := range results {
		switch {
		case r.Err != nil && !r.Interrupted: // being stopped is not a failure
			failed = append(failed, fmt.Sprintf("✗ %s: %v", r.TargetCode, r.Err))
		case r.Failed > 0 || len(r.Problems) > 0:
			failed = append(failed, fmt.Sprintf("⚠ %s: %d articles failed, %d problems (listed above)", r.TargetCode, r.Failed, len(r.Problems)))
		case r.Retrying > 0:
			failed = append(failed, fmt.Sprintf("⏳ %s: %d articles wait for a retry (listed above)", r.TargetCode, r.Retrying))
		}
		if r.Interrupted {
			stopped++
		} else {
			done++
		}
	}
	list := ""
	if len(failed) > 0 {
		list = "\n  " + strings.Join(failed, "\n  ")
	}
	// A database that stayed away is not the sites' failure, and the run
	// could not be finished (nor recorded): it is said apart.
	for _, r := range results {
		var down *store.UnavailableError
		if !r.Interrupted && errors.As(r.Err, &down) {
			return exitCode(2, fmt.Sprintf("%s: could not finish: database unreachable (%v) — what was stored is kept; run it again once the database answers%s",
				name, down, list))
		}
	}
	code := crawl.ExitCode(results)
	if interrupted || code == crawl.ExitInterrupted {
		return exitCode(exitInterrupted, fmt.Sprintf("%s: interrupted — %d of %d targets done, %d stopped; what was collected is kept, run it again to go on%s",
			name, done, len(results), stopped, list))
	}
	if code == crawl.ExitFailed {
		if n := crawl.RetryingTotal(results); n > 0 {
			list += fmt.Sprintf("\n  %d articles are missing until their retry (`zhizhi crawl --retry-failed` tries them now)", n)
		}
		return exitCode(1, fmt.Sprintf("%s: %d of %d targets failed or lost articles:%s", name, len(failed), len(results), list))
	}
	return nil
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
