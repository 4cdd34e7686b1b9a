package cli

import (
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"

	"zhizhi/internal/fetch"
	"zhizhi/internal/robotstxt"
)

func init() { register(newRobotsCmd) }

func newRobotsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "robots",
		Short: "Inspect robots.txt rules",
	}
	cmd.AddCommand(newRobotsCheckCmd())
	return cmd
}

func newRobotsCheckCmd() *cobra.Command {
	var file, agent string
	cmd := &cobra.Command{
		Use:   "check --robots FILE [--agent TOKEN] URL...",
		Short: "Say whether each URL is allowed by a robots.txt file, and which rule decided",
		Long: `Reads a robots.txt file from disk, selects the group for the agent's product
token (RFC 9309: merged groups, '*' only when no group names the agent) and
prints for each URL whether it may be fetched, with the deciding rule and its
line number.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return exitCode(1, "robots check: --robots FILE is required")
			}
			body, err := os.ReadFile(file)
			if err != nil {
				return exitCode(1, fmt.Sprintf("robots check: read %s: %v", file, err))
			}
			if robotstxt.AgentToken(agent) == "" {
				return exitCode(1, fmt.Sprintf("robots check: --agent %q has no product token (letters, '-' or '_')", agent))
			}
			r := robotstxt.Parse(body, agent)
			out := cmd.OutOrStdout()
			for _, raw := range args {
				u, err := url.Parse(raw)
				if err != nil {
					return exitCode(1, fmt.Sprintf("robots check: bad URL %q: %v", raw, err))
				}
				d := r.DecideURL(u)
				verdict := "allowed"
				if !d.Allowed {
					verdict = "disallowed"
				}
				if d.Line > 0 {
					fmt.Fprintf(out, "%-10s  %s  line %d %q\n", verdict, raw, d.Line, d.Rule)
				} else {
					fmt.Fprintf(out, "%-10s  %s  (%s)\n", verdict, raw, d.Reason)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "robots", "", "robots.txt file to read")
	cmd.Flags().StringVar(&agent, "agent", fetch.ProductToken, "product token (or full User-Agent) to select the group for")
	return cmd
}
