package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"zhizhi/internal/model"
)

func init() { register(newSiteCmd) }

func newSiteCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "site",
		Short: "Show the sites in the database (crawl_site)",
	}
	cmd.AddCommand(newSiteListCmd())
	return cmd
}

// siteRow is one line of `zhizhi site list`, also its JSON shape.
type siteRow struct {
	SiteCode      string `json:"site_code"`
	SiteName      string `json:"site_name"`
	SiteRole      string `json:"site_role"`
	Access        string `json:"access"`
	FetchStrategy string `json:"fetch_strategy"` // direct | browser, as written in the YAML
	CMSAdapter    string `json:"cms_adapter,omitempty"`
	YAMLPath      string `json:"yaml_path,omitempty"`
	RespectRobots bool   `json:"respect_robots"`
	Enabled       bool   `json:"enabled"`
}

func newSiteListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sites with their role, access policy, fetch strategy and template",
		Long: `List prints every site in the database, one per line:

  site_code  name  role  access  strategy  adapter/yaml  respect_robots  enabled

access is full (body text, raw HTML, attachments) or summary (only the first
64 KiB of each page is read, for the title and public attributes; no body text,
no attachments); strategy is direct (plain HTTP) or browser (headless
Chromium); adapter/yaml is the CMS adapter a site uses ("cms:gkmlpt") or
the YAML file holding its selectors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			sites, err := st.ListSites(ctx)
			if err != nil {
				return exitCode(1, "site list: "+err.Error())
			}
			rows := make([]siteRow, 0, len(sites))
			for _, s := range sites {
				rows = append(rows, siteRow{
					SiteCode:      s.SiteCode,
					SiteName:      s.SiteName,
					SiteRole:      s.SiteRole,
					Access:        s.Access,
					FetchStrategy: strategyWord(s.DefaultFetchStrategy),
					CMSAdapter:    s.CMSAdapter,
					YAMLPath:      s.YAMLPath,
					RespectRobots: s.RespectRobots,
					Enabled:       s.Enabled,
				})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(out, "no sites — run `zhizhi config sync` to load config/sites/*.yaml")
				return nil
			}
			return printSites(out, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// strategyWord turns the stored tier names (the seed's httpx/playwright)
// back into the words the configuration uses.
func strategyWord(stored string) string {
	switch stored {
	case model.StrategyDirect, "":
		return "direct"
	case model.StrategyBrowser:
		return "browser"
	}
	return stored
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func printSites(w io.Writer, rows []siteRow) error {
	t := table{header: []string{"SITE_CODE", "NAME", "ROLE", "ACCESS", "STRATEGY", "ADAPTER/YAML", "ROBOTS", "ENABLED"}}
	for _, r := range rows {
		src := r.YAMLPath
		if r.CMSAdapter != "" {
			src = "cms:" + r.CMSAdapter
		}
		t.add(r.SiteCode, r.SiteName, r.SiteRole, r.Access, r.FetchStrategy, src, yesNo(r.RespectRobots), yesNo(r.Enabled))
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d sites\n", len(rows))
	return err
}
