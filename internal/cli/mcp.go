package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/acquire"
	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/config"
	"zhizhi/internal/corpus"
	"zhizhi/internal/mcp"
)

func init() { register(newMCPCmd) }

func newMCPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Speak MCP on standard input and output: search, read and cite the active corpus release",
		Long: `mcp runs an MCP server (Model Context Protocol) on standard input and output,
for an agent that starts zhizhi itself (Claude Desktop, an IDE, a script).
Its tools search the active corpus release, read a work and cite it; every
result marks the text that came from the web as untrusted.

Without a key it runs as the local operator with read access only. With
ZHIZHI_API_KEY set to an API key, it runs as that key: a key with the
acquire scope adds the fetch tool, which gets a page now through the polite
client and charges the key's budget. zhizhi serve offers the same server
over HTTP on /mcp (Authorization: Bearer <key>).

Exit codes: 0 the agent closed the connection; 1 serving failed; 2 usage
error, no zhizhi database, or a bad key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// Standard output is the protocol's: logs go to standard error.
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			users := auth.New(st, auth.Options{})
			p := &auth.Principal{Username: strings.TrimPrefix(cliActor(), "cli:"), Role: auth.RoleViewer}
			be := &mcp.Zhizhi{Corpus: corpus.New(st, Version)}
			if key := os.Getenv("ZHIZHI_API_KEY"); key != "" {
				r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
				r.Header.Set("Authorization", "Bearer "+key)
				kp, err := users.Authenticate(r)
				if errors.Is(err, auth.ErrUnauthenticated) {
					return exitCode(2, "mcp: ZHIZHI_API_KEY is not a valid API key (expired, revoked or mistyped)")
				}
				if err != nil {
					return exitCode(2, "mcp: "+err.Error())
				}
				p = kp
				if p.Allows(auth.ScopeAcquire) {
					b, _ := config.Load(settings.ConfigDir)
					c, err := newClient(ctx, st, b)
					if err != nil {
						return err
					}
					defer c.Close()
					a, err := acquire.New(acquire.Deps{Store: st, Client: c, Logger: log, Budget: budget.New(st, nil)})
					if err != nil {
						return exitCode(2, "mcp: "+err.Error())
					}
					be.Acquire = a.Handler()
				}
			}
			err = mcp.ServeStdio(ctx, be, p, mcp.Options{Version: Version, Logger: log}, cmd.InOrStdin(), cmd.OutOrStdout())
			if err != nil && ctx.Err() == nil {
				return exitCode(1, fmt.Sprintf("mcp: %v", err))
			}
			return nil
		},
	}
}
