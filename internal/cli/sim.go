package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"zhizhi/internal/sim"
)

func init() { register(newSimCmd) }

func newSimCmd() *cobra.Command {
	var seed int64
	var scale int
	var addr string
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the simulated government web until Ctrl-C",
		Long: `Run the simulated government web (docs/sim.md): a gkmlpt city portal behind a
cookie challenge, gkmlpt county sites, a GB18030 template site, provincial and
national reference sites and a news site, each on its own loopback port.

It prints the host table, an "export ZHIZHI_RESOLVE=…" line for the crawler and
the control URL (ground truth, clock, faults, access log).

--listen with port 0 (the default) gives every host a free port; with a fixed
port P the control host takes P and the sites P+1, P+2, ….`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if ctx == nil {
				ctx = context.Background()
			}
			w, err := sim.Start(ctx, sim.Options{Seed: seed, Addr: addr, Scale: scale})
			if err != nil {
				return fmt.Errorf("start sim: %w", err)
			}
			defer w.Close()
			out := cmd.OutOrStdout()
			m := w.ResolveMap()
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HOST\tADDRESS")
			for _, h := range w.Hosts() {
				fmt.Fprintf(tw, "%s\t%s\n", h, m[h])
			}
			_ = tw.Flush()
			fmt.Fprintf(out, "\nexport ZHIZHI_RESOLVE=%s\n", w.ResolveString())
			fmt.Fprintf(out, "control: %s/__sim/truth  (sim clock %s)\n", w.ControlURL(), w.Now().Format("2006-01-02 15:04 -0700"))
			fmt.Fprintln(out, "模拟政务网已启动，按 Ctrl-C 停止。")
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().Int64Var(&seed, "seed", 1, "content seed: same seed, same pages")
	cmd.Flags().IntVar(&scale, "scale", 1, "articles-per-column multiplier (1 = demo size)")
	cmd.Flags().StringVar(&addr, "listen", envOr("ZHIZHI_LISTEN", "127.0.0.1:0"), "listen address; port 0 = free ports (env ZHIZHI_LISTEN)")
	return cmd
}
