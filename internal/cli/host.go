package cli

import (
	"errors"
	"fmt"
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
		Short: "Each host's state: healthy, backing off, breaker open, CAPTCHA block, review flag, robots.txt",
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
			now := time.Now()
			t := &table{header: []string{"HOST", "状态 STATE", "连续错误", "熔断次数(7天)", "ROBOTS", "复核 REVIEW"}}
			for _, h := range hosts {
				t.add(h.Host, hostStateText(h, now), fmt.Sprint(h.ConsecutiveErrors), fmt.Sprint(tripsWithin(h.BreakerTrips, now, 7*24*time.Hour)),
					robotsText(h), reviewText(h))
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
		Short: "A person's decision: let a blocked host (breaker, CAPTCHA, review flag) be asked again",
		Long: `Clear resets a host's error run, backoff, breaker, review flag and block reason
(a CAPTCHA), so zhizhi may ask it again. Use it after a person has looked at
why the host was blocked; the breaker's past trips stay on record.`,
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

func hostStateText(h model.HostState, now time.Time) string {
	switch {
	case h.BlockReason != "":
		return "⛔ 已封禁 (" + h.BlockReason + ")"
	case h.BreakerUntil != nil && now.Before(*h.BreakerUntil):
		return "🔴 熔断至 " + h.BreakerUntil.Local().Format("01-02 15:04")
	case h.BackoffUntil != nil && now.Before(*h.BackoffUntil):
		return "🟡 退避至 " + h.BackoffUntil.Local().Format("15:04:05")
	}
	return "🟢 正常"
}

func robotsText(h model.HostState) string {
	if h.RobotsFetchedAt == nil {
		return "—"
	}
	return fmt.Sprintf("%d @ %s", h.RobotsStatus, h.RobotsFetchedAt.Local().Format("01-02 15:04"))
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
