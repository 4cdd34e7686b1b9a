package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

func init() { register(newHostCmd) }

func newHostCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "The politeness state of the hosts zhizhi has visited",
	}
	cmd.AddCommand(newHostListCmd(), newHostClearCmd())
	return cmd
}

func newHostListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Each host's state: healthy, backing off, breaker open, CAPTCHA block, robots.txt unreachable, review flag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			hosts, err := st.ListHostStates(ctx)
			if err != nil {
				return exitCode(1, err.Error())
			}
			robots, err := st.ListRobotsStates(ctx)
			if err != nil {
				return exitCode(1, err.Error())
			}
			byHost := map[string][]model.RobotsState{}
			for _, r := range robots {
				if _, seen := byHost[r.Host]; !seen && !slices.ContainsFunc(hosts, func(h model.HostState) bool { return h.Host == r.Host }) {
					hosts = append(hosts, model.HostState{Host: r.Host})
				}
				byHost[r.Host] = append(byHost[r.Host], r)
			}
			slices.SortFunc(hosts, func(a, b model.HostState) int { return strings.Compare(a.Host, b.Host) })
			now := time.Now()
			t := &table{header: []string{"HOST", "状态 STATE", "连续错误", "熔断次数(7天)", "ROBOTS", "复核 REVIEW"}}
			for _, h := range hosts {
				rs := byHost[h.Host]
				t.add(h.Host, hostStateText(h, rs, now), fmt.Sprint(h.ConsecutiveErrors), fmt.Sprint(tripsWithin(h.BreakerTrips, now, 7*24*time.Hour)),
					robotsText(rs), reviewText(h))
			}
			if err := t.write(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d hosts. `zhizhi host clear HOST` lets a blocked host be asked again, after a person has looked.\n", len(hosts))
			return nil
		},
	}
}

func newHostClearCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "clear HOST",
		Short: "A person's decision: let a blocked host (breaker, CAPTCHA, unreachable robots.txt, review flag) be asked again",
		Long: `Clear resets a host's error run, backoff, breaker, review flag and block reason
(a CAPTCHA), and forgets a robots.txt that could not be fetched, so zhizhi may
ask the host again (robots.txt first). Use it after a person has looked at why
the host was blocked; the breaker's past trips stay on record.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.ClearHostBlock(ctx, args[0]); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return exitCode(1, fmt.Sprintf("host clear: %s has no recorded state (see `zhizhi host list`)", args[0]))
				}
				return exitCode(1, err.Error())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: cleared; the next crawl may ask it again\n", args[0])
			return nil
		},
	}
}

func hostStateText(h model.HostState, robots []model.RobotsState, now time.Time) string {
	switch {
	case h.BlockReason != "":
		return "⛔ 已封禁 (" + h.BlockReason + ")"
	case h.BreakerUntil != nil && now.Before(*h.BreakerUntil):
		return "🔴 熔断至 " + wallText(*h.BreakerUntil, "01-02 15:04")
	}
	// A robots.txt that cannot be fetched stops the host until a retry
	// reads it: not healthy, whatever the error count says.
	for _, r := range robots {
		if r.Failures > 0 {
			since := r.FetchedAt
			if r.FailingSince != nil {
				since = *r.FailingSince
			}
			return fmt.Sprintf("🟠 robots.txt unreachable since %s, error %s (无法获取 robots.txt，暂停抓取)",
				wallText(since, "01-02 15:04"), r.LastError)
		}
	}
	if h.BackoffUntil != nil && now.Before(*h.BackoffUntil) {
		return "🟡 退避至 " + wallText(*h.BackoffUntil, "15:04:05")
	}
	return "🟢 正常"
}

// robotsText gives the last answer of each origin's robots.txt; the origin
// is named only when the host has several (http and https, other ports).
func robotsText(robots []model.RobotsState) string {
	if len(robots) == 0 {
		return "—"
	}
	parts := make([]string, 0, len(robots))
	for _, r := range robots {
		status := fmt.Sprint(r.Status)
		if r.Failures > 0 {
			status = fmt.Sprintf("%s ×%d", r.LastError, r.Failures)
		}
		p := status + " @ " + wallText(r.FetchedAt, "01-02 15:04")
		if len(robots) > 1 {
			p = r.Origin + " " + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func reviewText(h model.HostState) string {
	if h.NeedsReview {
		return "需人工复核"
	}
	return ""
}

func tripsWithin(trips []time.Time, now time.Time, d time.Duration) int {
	n := 0
	for _, t := range trips {
		if now.Sub(t) <= d {
			n++
		}
	}
	return n
}
