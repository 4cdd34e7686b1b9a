package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/sim"
)

func init() { register(newSimCmd) }

func newSimCmd() *cobra.Command {
	var seed int64
	var scale, counties int
	var addr, writeConfig string
	var fixedClock bool
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the simulated government web until Ctrl-C",
		Long: `Run the simulated government web (docs/sim.md): a gkmlpt city portal behind a
cookie challenge, gkmlpt county sites, a GB18030 template site, provincial and
national reference sites and a news site, each on its own loopback port.

It prints the host table, an "export ZHIZHI_RESOLVE=…" line for the crawler and
the control URL (ground truth, clock, faults, access log).

--listen with port 0 (the default) gives every host a free port; with a fixed
port P the control host takes P and the sites P+1, P+2, ….

--counties N (1 to 200) adds N generated county sites to the world, for
measuring crawls of many hosts: c001.county.gov.test, c002.county.gov.test, …
Odd ones run gkmlpt, even ones are template sites (alternately GB18030 with
index_1.html lists, and "下一页" links with a column robots.txt forbids); each
has its own departments and columns, and the same --seed gives the same
counties. --write-config DIR writes their configuration to DIR (a new or empty
directory): sites/, departments.csv, and cms/gkmlpt.yaml and
topic_synonyms.yaml copied from the simulated web's own configuration (built
into the binary). DIR holds the generated
counties only, not the hand-written sites: crawl it with its own data
directory, e.g.

  zhizhi sim --counties 50 --write-config /tmp/counties
  export ZHIZHI_CONFIG_DIR=/tmp/counties ZHIZHI_DATA_DIR=/tmp/counties-data
  zhizhi dept import /tmp/counties/departments.csv
  zhizhi config sync
  zhizhi crawl --all

(with the export ZHIZHI_RESOLVE=… line it prints in the crawler's shell).

The sim clock starts at the present moment, so the sites look as fresh as
they are meant to; --fixed-clock starts it at the fixed moment the tests use
(` + "2026-11-01 09:00 +0800" + `) instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if counties < 0 || counties > sim.MaxCounties {
				return exitCode(2, fmt.Sprintf("sim: --counties %d: give 1 to %d (or leave it out)", counties, sim.MaxCounties))
			}
			if writeConfig != "" && counties == 0 {
				return exitCode(2, "sim: --write-config writes the generated counties' configuration: give --counties N too")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if ctx == nil {
				ctx = context.Background()
			}
			now := time.Now()
			if fixedClock {
				now = sim.DefaultNow
			}
			w, err := sim.Start(ctx, sim.Options{Seed: seed, Addr: addr, Scale: scale, Counties: counties, Now: now})
			if err != nil {
				return fmt.Errorf("start sim: %w", err)
			}
			defer w.Close()
			out := cmd.OutOrStdout()
			if writeConfig != "" {
				bundled, err := os.MkdirTemp("", "zhizhi-sim-config-")
				if err != nil {
					return exitCode(1, "sim: "+err.Error())
				}
				defer os.RemoveAll(bundled)
				bundled = filepath.Join(bundled, "config")
				if err := writeDemoConfig(bundled); err != nil {
					return exitCode(1, "sim: "+err.Error())
				}
				if err := w.WriteCountyConfig(writeConfig, bundled); err != nil {
					return exitCode(2, "sim: "+err.Error())
				}
				fmt.Fprintf(out, "== 已写入 %d 个生成县区站点的配置 (config written): %s\n\n", counties, writeConfig)
			}
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
	cmd.Flags().IntVar(&counties, "counties", 0, "add this many generated county sites (1 to 200)")
	cmd.Flags().StringVar(&writeConfig, "write-config", "", "write the generated counties' configuration directory here (with --counties)")
	cmd.Flags().BoolVar(&fixedClock, "fixed-clock", false, "start the sim clock at 2026-11-01 09:00 +0800 instead of now")
	cmd.Flags().StringVar(&addr, "listen", envOr("ZHIZHI_LISTEN", "127.0.0.1:0"), "listen address; port 0 = free ports (env ZHIZHI_LISTEN)")
	return cmd
}
