package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

func init() { register(newTargetCmd) }

func newTargetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "target",
		Short: "Show the crawl targets in the database (crawl_target)",
	}
	cmd.AddCommand(newTargetListCmd())
	return cmd
}

// targetRow is one line of `zhizhi target list`, also its JSON shape.
type targetRow struct {
	TargetCode  string `json:"target_code"`
	TargetName  string `json:"target_name"`
	SiteCode    string `json:"site_code"`
	DeptPath    string `json:"dept_path,omitempty"`
	DeptBinding string `json:"dept_binding"`
	DeptID      *int64 `json:"dept_id"`
	DeptName    string `json:"dept_name,omitempty"`
	Cron        string `json:"schedule_cron"`
	CadenceDays int    `json:"expected_cadence_days"`
	Enabled     bool   `json:"enabled"`
	// Crawled is what the scheduler will do: the target, its site and its
	// site department must all be enabled (docs/config.md).
	Crawled    bool   `json:"crawled"`
	DisabledBy string `json:"disabled_by,omitempty"` // target | site | dept
	Source     string `json:"source"`
	EntryURL   string `json:"entry_url"`
}

func newTargetListCmd() *cobra.Command {
	var (
		siteCode string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the targets with their site, department, schedule and state",
		Long: `List prints every target in the database (what ` + "`zhizhi config sync`" + ` wrote, and
targets created in the admin), one per line:

  target_code  site_code  dept  schedule_cron  expected_cadence_days  enabled  source  entry_url

dept is the department binding: "mapped <dept_id> <department name>" for a
column owned by a local department (the name comes from local_department,
see ` + "`zhizhi dept import`" + `), or the badge of a column with no local
department: city_level 市本级, cross_dept 跨部门, external_ref 外部参考. A
template site's target keeps no binding in the database, only dept_id, so
one without dept_id is shown as external_ref on a reference site and as
"none 无本地部门" on a local site.

enabled is "yes" when the target will be crawled, otherwise "no" and what
is switched off: the target itself, its site, or its site department.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			rows, err := targetRows(ctx, st, siteCode)
			if err != nil {
				return exitCode(1, "target list: "+err.Error())
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if rows == nil {
					rows = []targetRow{}
				}
				return enc.Encode(rows)
			}
			if len(rows) == 0 {
				if siteCode != "" {
					fmt.Fprintf(out, "no targets for site %s — check the code with `zhizhi site list`\n", siteCode)
				} else {
					fmt.Fprintln(out, "no targets — run `zhizhi config sync` to load config/sites/*.yaml")
				}
				return nil
			}
			return printTargets(out, rows)
		},
	}
	cmd.Flags().StringVar(&siteCode, "site", "", "only the targets of the site with this site_code")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// targetRows joins targets with their sites, site departments and local
// departments. The tables are small (hundreds of rows), so reading them
// whole and joining here keeps the store's queries simple.
func targetRows(ctx context.Context, st *store.Store, siteCode string) ([]targetRow, error) {
	sites, err := st.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	siteByID := make(map[int64]model.Site, len(sites))
	deptByID := map[int64]model.SiteDepartment{}
	for _, s := range sites {
		siteByID[s.ID] = s
		if s.CMSAdapter == "" {
			continue
		}
		depts, err := st.ListSiteDepartments(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		for _, d := range depts {
			deptByID[d.ID] = d
		}
	}
	locals, err := st.ListDepartments(ctx)
	if err != nil {
		return nil, err
	}
	localName := make(map[int64]string, len(locals))
	for _, d := range locals {
		localName[d.DeptID] = d.DeptName
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: siteCode})
	if err != nil {
		return nil, err
	}

	rows := make([]targetRow, 0, len(targets))
	for _, t := range targets {
		site := siteByID[t.SiteID]
		r := targetRow{
			TargetCode:  t.TargetCode,
			TargetName:  t.TargetName,
			SiteCode:    site.SiteCode,
			DeptID:      t.DeptID,
			Cron:        t.ScheduleCron,
			CadenceDays: t.ExpectedCadenceDays,
			Enabled:     t.Enabled,
			Source:      t.Source,
			EntryURL:    t.EntryURL,
		}
		deptEnabled := true
		if t.SiteDepartmentID != nil {
			d := deptByID[*t.SiteDepartmentID]
			r.DeptPath = d.DeptPath
			r.DeptBinding = d.DeptBinding
			deptEnabled = d.Enabled
		} else {
			r.DeptBinding = templateBinding(t.DeptID, site.SiteRole)
		}
		if t.DeptID != nil {
			r.DeptName = localName[*t.DeptID]
		}
		switch {
		case !t.Enabled:
			r.DisabledBy = "target"
		case !site.Enabled:
			r.DisabledBy = "site"
		case !deptEnabled:
			r.DisabledBy = "dept"
		default:
			r.Crawled = true
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// bindingNone marks a template-site target on a local site without a
// dept_id: the database does not say whether it was city_level or
// cross_dept in the YAML, only that no local department owns it.
const bindingNone = "none"

// templateBinding derives the binding of a template-site target, which has
// no site department, the way the binding rules judge local versus external:
// dept_id set means mapped; otherwise the site's role decides.
func templateBinding(deptID *int64, role string) string {
	switch {
	case deptID != nil:
		return model.BindingMapped
	case role == model.RoleProvinceRef || role == model.RoleNationRef:
		return model.BindingExternalRef
	default:
		return bindingNone
	}
}

// bindingBadge is the word the UI shows for a column with no local
// department, instead of a warning sign.
var bindingBadge = map[string]string{
	model.BindingCityLevel:   "市本级",
	model.BindingCrossDept:   "跨部门",
	model.BindingExternalRef: "外部参考",
	model.BindingPending:     "待确认",
	bindingNone:              "无本地部门",
}

// deptCell is the dept column: binding, dept_id and department name when
// mapped, else binding and its badge.
func (r targetRow) deptCell() string {
	if r.DeptBinding != model.BindingMapped {
		return strings.TrimSpace(r.DeptBinding + " " + bindingBadge[r.DeptBinding])
	}
	if r.DeptID == nil {
		return r.DeptBinding
	}
	name := r.DeptName
	if name == "" {
		name = "(不在 local_department)"
	}
	return r.DeptBinding + " " + strconv.FormatInt(*r.DeptID, 10) + " " + name
}

func (r targetRow) enabledCell() string {
	if r.Crawled {
		return "yes"
	}
	return "no (" + r.DisabledBy + ")"
}

func printTargets(w io.Writer, rows []targetRow) error {
	t := table{header: []string{"TARGET_CODE", "SITE", "DEPT", "SCHEDULE_CRON", "CADENCE_DAYS", "ENABLED", "SOURCE", "ENTRY_URL"}}
	crawled := 0
	sites := map[string]bool{}
	for _, r := range rows {
		t.add(r.TargetCode, r.SiteCode, r.deptCell(), r.Cron, strconv.Itoa(r.CadenceDays), r.enabledCell(), r.Source, r.EntryURL)
		if r.Crawled {
			crawled++
		}
		sites[r.SiteCode] = true
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d targets on %d sites, %d enabled\n", len(rows), len(sites), crawled)
	return err
}
