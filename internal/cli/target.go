package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

func init() { register(newTargetCmd) }

func newTargetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "target",
		Short: "Show the crawl targets in the database (crawl_target) and switch them on or off",
	}
	cmd.AddCommand(newTargetListCmd(), newTargetEnableCmd(), newTargetDisableCmd(), newTargetRevertCmd())
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
	// EnabledFrom says where the target's own enabled comes from: yaml,
	// override (a person switched it, EnabledBy) or console.
	EnabledFrom string `json:"enabled_from"`
	EnabledBy   string `json:"enabled_by,omitempty"`
	Source      string `json:"source"`
	EntryURL    string `json:"entry_url"`
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
target no sync has written since it learned to keep its binding shows
"none 无本地部门" when it has no dept_id on a local site.

enabled is "yes" when the target will be crawled, otherwise "no" and what
is switched off: the target itself, its site, or its site department. A
target someone switched with ` + "`zhizhi target enable|disable`" + ` or in the console
says who ("set by cli:alice"); ` + "`config sync`" + ` keeps that until
` + "`zhizhi target revert CODE enabled`" + `.`,
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
	enabledBy := map[int64]string{}
	overrides, err := st.ListTargetOverrides(ctx, model.FieldEnabled)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		enabledBy[o.TargetID] = o.ChangedBy
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
		} else if t.DeptBinding != "" {
			r.DeptBinding = t.DeptBinding
		} else {
			r.DeptBinding = templateBinding(t.DeptID, site.SiteRole)
		}
		switch by, ok := enabledBy[t.ID]; {
		case ok && t.Source == model.SourceYAML:
			r.EnabledFrom, r.EnabledBy = target.FromOverride, by
		case t.Source == model.SourceYAML:
			r.EnabledFrom = target.FromYAML
		default:
			r.EnabledFrom, r.EnabledBy = target.FromConsole, cmp.Or(by, t.CreatedBy)
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
// dept_id and without a stored binding (a row written before targets kept
// theirs): only that no local department owns it is known.
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
	cell := "yes"
	if !r.Crawled {
		cell = "no (" + r.DisabledBy + ")"
	}
	if r.EnabledFrom == target.FromOverride {
		cell += " set by " + r.EnabledBy
	}
	return cell
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

// targetService changes targets from the command line; switching on and
// off and reverting never need the dry-run.
func targetService(st *store.Store) *target.Service { return &target.Service{Store: st} }

// targetChangeError turns a refused change into its exit: 1 with the
// message, naming what to do.
func targetChangeError(verb string, err error) error {
	return exitCode(1, "target "+verb+": "+err.Error())
}

func newTargetEnableCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "enable CODE",
		Short: "Switch a target on; config sync keeps it on until reverted",
		Long: `Enable switches the target on. For a target declared in config/sites, this is a
change over the file that ` + "`zhizhi config sync`" + ` keeps; ` + "`zhizhi target revert CODE enabled`" + `
gives it back to the file. The change is recorded in the audit trail under
cli:<your user name>.`,
		Example: `  zhizhi target enable lianzhou_tzgg`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return setTargetEnabled(cmd, args[0], true, reason)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit trail")
	return cmd
}

func newTargetDisableCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "disable CODE [--reason TEXT]",
		Short: "Switch a target off; config sync keeps it off until reverted",
		Long: `Disable stops crawling the target; its articles and history stay. For a target
declared in config/sites, this is a change over the file that ` + "`zhizhi config sync`" + `
keeps; ` + "`zhizhi target revert CODE enabled`" + ` gives it back to the file. The change
and the reason are recorded in the audit trail under cli:<your user name>.`,
		Example: `  zhizhi target disable lianzhou_tzgg --reason "栏目改版，待更新选择器"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return setTargetEnabled(cmd, args[0], false, reason)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit trail")
	return cmd
}

func setTargetEnabled(cmd *cobra.Command, code string, enabled bool, reason string) error {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	ctx := cmd.Context()
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	before, err := st.TargetByCode(ctx, code)
	if errors.Is(err, store.ErrNotFound) {
		return exitCode(1, fmt.Sprintf("target %s: %q is not in the database — see `zhizhi target list`", verb, code))
	}
	if err != nil {
		return targetChangeError(verb, err)
	}
	tg, err := targetService(st).SetEnabled(ctx, code, enabled, reason, cliActor())
	if err != nil {
		return targetChangeError(verb, err)
	}
	out := cmd.OutOrStdout()
	switch {
	case before.Enabled == tg.Enabled:
		fmt.Fprintf(out, "%s is already %sd; nothing changed\n", code, verb)
	case tg.Source == model.SourceYAML:
		fmt.Fprintf(out, "%s %sd; config sync keeps this until `zhizhi target revert %s enabled`\n", code, verb, code)
	default:
		fmt.Fprintf(out, "%s %sd\n", code, verb)
	}
	return nil
}

func newTargetRevertCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revert CODE FIELD",
		Short: "Give a field of a YAML target back to what config/sites says",
		Long: `Revert forgets a change someone made over a target's site file (in the console,
or with ` + "`zhizhi target enable|disable`" + `) and sets the field to the file's value
again; the next ` + "`zhizhi config sync`" + ` then follows the file. FIELD is one of:
` + strings.Join(model.TargetFields, ", ") + `.`,
		Example: `  zhizhi target revert lianzhou_tzgg enabled`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			tg, err := targetService(st).Revert(ctx, args[0], args[1], cliActor())
			if err != nil {
				return targetChangeError("revert", err)
			}
			v, _ := model.TargetFieldValue(tg, args[1])
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s is %q again, as config/sites says\n", args[0], args[1], v)
			return nil
		},
	}
}
