package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/crawl"
	"zhizhi/internal/health"
)

func init() { register(newHealthCmd) }

func newHealthCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "health",
		Short: "List what needs a look: stale targets, failed targets, articles waiting for a retry, blocked hosts; exit 1 when anything is listed",
		Long: `Health reads the database and lists what needs a person's attention:

  stale targets    enabled columns with no new article for more than three
                   times their expected_cadence_days (a weekly column after
                   21 days, a monthly one after 90). A column that never
                   yielded an article counts from when it was added.
  failed targets   enabled columns whose last finished crawl failed (the
                   column itself, or any of its articles)
  pending retries  articles of enabled columns whose fetch failed and that
                   wait for a retry, with when it comes: they are missing
                   until then ('zhizhi crawl --retry-failed' tries them now)
  hosts            hosts zhizhi is not asking now: backing off after errors,
                   breaker open, stopped by a CAPTCHA, robots.txt
                   unreachable, or flagged for review (a third breaker trip
                   within 7 days, or a CAPTCHA)

--json prints the same report as one JSON document for scripts and
monitoring.

Exit status:
  0    nothing to report
  1    something is listed
  2    usage error, or the database cannot be read`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := health.Check(ctx, st, time.Now())
			if err != nil {
				return exitCode(2, "health: "+err.Error())
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else if err := writeHealth(out, rep); err != nil {
				return err
			}
			if n := rep.Problems(); n > 0 {
				return exitCode(1, fmt.Sprintf("health: %d stale targets, %d failed targets, %d articles waiting for a retry, %d hosts with problems",
					len(rep.Stale), len(rep.Failing), rep.RetriesWaiting, len(rep.Hosts)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// writeHealth prints the report as tables, one per kind of problem, or one
// line when all is well.
func writeHealth(w io.Writer, rep health.Report) error {
	if rep.Problems() == 0 {
		_, err := fmt.Fprintf(w, "✓ 一切正常 all healthy: %d 个启用的栏目，无过期、无失败，没有受阻的主机\n", rep.Targets)
		return err
	}
	if len(rep.Stale) > 0 {
		fmt.Fprintf(w, "⏰ 过期栏目 stale targets: %d（超过 3 倍预期更新周期没有新文章）\n", len(rep.Stale))
		t := &table{header: []string{"栏目 TARGET", "站点 SITE", "名称", "周期(天)", "最新文章", "静默(天)", "阈值(天)"}}
		for _, s := range rep.Stale {
			last := "— 从未采集到文章（自添加起计）"
			if s.LastArticleTime != nil {
				last = wallText(*s.LastArticleTime, "2006-01-02 15:04")
			}
			if s.NeverCollected {
				last = fmt.Sprintf("— 从未采集（首次计划时间后 %.0f 小时仍未采集）", health.NeverCollectedGrace.Hours())
			}
			t.add(s.TargetCode, s.SiteCode, s.TargetName, fmt.Sprint(s.CadenceDays), last,
				fmt.Sprintf("%.1f", s.QuietDays), fmt.Sprint(s.LimitDays))
		}
		if err := t.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if len(rep.Failing) > 0 {
		fmt.Fprintf(w, "✗ 上次运行失败的栏目 failed targets: %d\n", len(rep.Failing))
		t := &table{header: []string{"栏目 TARGET", "站点 SITE", "结束时间", "执行者", "新增", "失败文章", "原因 ERROR"}}
		for _, f := range rep.Failing {
			t.add(f.TargetCode, f.SiteCode, wallText(f.Run.FinishedAt, "01-02 15:04"), f.Run.Runner,
				fmt.Sprint(f.Run.Created), fmt.Sprint(f.Run.Failed), oneLine(f.Run.Error, 120))
		}
		if err := t.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if rep.RetriesWaiting > 0 {
		fmt.Fprintf(w, "⏳ 待重试的文章 pending retries: %d（抓取失败，重试前缺失）\n", rep.RetriesWaiting)
		t := &table{header: []string{"栏目 TARGET", "站点 SITE", "文章 URL", "失败次数", "下次重试", "原因 ERROR"}}
		for _, e := range rep.Retries {
			next := "—"
			if e.NextAttemptAt != nil {
				next = crawl.WhenText(*e.NextAttemptAt)
			}
			t.add(e.TargetCode, e.SiteCode, e.URL, fmt.Sprint(e.Attempts), next, oneLine(e.Error, 80))
		}
		if err := t.write(w); err != nil {
			return err
		}
		if more := rep.RetriesWaiting - len(rep.Retries); more > 0 {
			fmt.Fprintf(w, "… 另有 %d 篇（--json 列出前 %d 篇）\n", more, health.ListedRetries)
		}
		fmt.Fprintln(w, "到期后下次采集会自动重试；`zhizhi crawl --retry-failed --target CODE` 立即重试。")
		fmt.Fprintln(w)
	}
	if len(rep.Hosts) > 0 {
		fmt.Fprintf(w, "🔴 受阻的主机 hosts: %d\n", len(rep.Hosts))
		t := &table{header: []string{"HOST", "问题 PROBLEM", "说明"}}
		for _, h := range rep.Hosts {
			kinds := make([]string, 0, len(h.Kinds))
			for _, k := range h.Kinds {
				kinds = append(kinds, hostKindText(k))
			}
			t.add(h.Host, strings.Join(kinds, "，"), hostDetail(h))
		}
		if err := t.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w, "`zhizhi host clear HOST` lets a blocked host be asked again, after a person has looked.")
	}
	return nil
}

func hostKindText(kind string) string {
	switch kind {
	case health.HostCaptcha:
		return "⛔ 验证码封禁"
	case health.HostReview:
		return "👀 需人工复核"
	case health.HostBreaker:
		return "🔴 熔断"
	case health.HostRobots:
		return "🟠 robots.txt 无法获取"
	case health.HostBackoff:
		return "🟡 退避"
	}
	return kind
}

func hostDetail(h health.HostIssue) string {
	var parts []string
	if h.BreakerUntil != nil {
		parts = append(parts, "熔断至 "+wallText(*h.BreakerUntil, "01-02 15:04"))
	}
	if h.BreakerTrips7d > 0 {
		parts = append(parts, fmt.Sprintf("7 天内熔断 %d 次", h.BreakerTrips7d))
	}
	if h.RobotsFailingSince != nil {
		parts = append(parts, fmt.Sprintf("robots.txt 自 %s 起无法获取（%s）", wallText(*h.RobotsFailingSince, "01-02 15:04"), h.RobotsError))
	}
	if h.BackoffUntil != nil {
		parts = append(parts, fmt.Sprintf("连续错误 %d 次，退避至 %s", h.ConsecutiveErrors, wallText(*h.BackoffUntil, "15:04:05")))
	}
	return strings.Join(parts, "；")
}

// oneLine keeps a cell on one line and at most n display columns.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if crawl.DisplayWidth(s) <= n {
		return s
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := crawl.DisplayWidth(string(r))
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String() + "…"
}
