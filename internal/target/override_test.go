package target_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configsync"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

func ptr[T any](v T) *T { return &v }

// setUp copies testdata/config (so a test can edit the files), imports its
// departments and syncs it into st. It returns the config directory.
func setUp(t *testing.T, st *store.Store) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.CopyFS(dir, os.DirFS("testdata/config")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, config.DepartmentsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	depts, bad := config.ReadDepartmentsCSV(f, config.DepartmentsFile)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if _, _, err := st.ImportDepartments(context.Background(), depts); err != nil {
		t.Fatal(err)
	}
	syncDir(t, st, dir)
	return dir
}

func syncDir(t *testing.T, st *store.Store, dir string) configsync.Report {
	t.Helper()
	b, ps := config.Load(dir)
	if config.HasErrors(ps) {
		t.Fatalf("config: %v", config.Errors(ps))
	}
	rep, err := configsync.Sync(context.Background(), st, b)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// editFile replaces old with new in a config file, failing when old is not
// there (the test would otherwise prove nothing).
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustTarget(t *testing.T, st *store.Store, code string) *model.Target {
	t.Helper()
	tg, err := st.TargetByCode(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func provenance(t *testing.T, svc *target.Service, code string) map[string]target.FieldSource {
	t.Helper()
	fs, err := svc.Provenance(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]target.FieldSource{}
	for _, f := range fs {
		out[f.Field] = f
	}
	return out
}

func audit(t *testing.T, st *store.Store, code string) []store.AuditEntry {
	t.Helper()
	es, err := st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "target", ObjectID: code})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// auditLines renders entries for a failure message.
func auditLines(es []store.AuditEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("\n  " + e.Action + " by " + e.Actor + " detail=" + e.Detail + " before=" + string(e.Before) + " after=" + string(e.After))
	}
	return b.String()
}

// enabledIn reads "enabled" out of an audit entry's before or after.
func enabledIn(t *testing.T, raw json.RawMessage) bool {
	t.Helper()
	var v struct {
		Enabled bool `json:"enabled"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("audit json %s: %v", raw, err)
	}
	return v.Enabled
}

// TestSyncKeepsConsoleChanges: a YAML target a person disabled and whose
// schedule and cadence another person changed keeps those through the next
// `config sync`, while the fields nobody touched follow the files; each
// field says where it comes from, and each change is in the audit trail.
func TestSyncKeepsConsoleChanges(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := setUp(t, st)
		svc := &target.Service{Store: st}

		if _, err := svc.SetEnabled(ctx, "county_zcwj", false, "栏目改版", "user:alice"); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Update(ctx, "county_zcwj", target.Patch{Schedule: ptr("30 3 * * *"), ExpectedCadenceDays: ptr(10)}, "user:bob")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Saved || len(res.Warnings) == 0 {
			t.Errorf("update without a sample URL: saved=%v warnings=%q, want saved with a warning", res.Saved, res.Warnings)
		}

		// The files change a field nobody overrode and one bob overrode.
		site := filepath.Join(dir, "sites", "county.yaml")
		editFile(t, site, "channel_name: 政策文件\n", "channel_name: 政策文件库\n")
		editFile(t, site, "expected_cadence_days: 7\n", "expected_cadence_days: 14\n")
		rep := syncDir(t, st, dir)
		// enabled, schedule_cron and expected_cadence_days
		if rep.OverridesKept != 3 || !strings.Contains(rep.String(), "3 setting(s) changed by a person kept") {
			t.Errorf("sync report %q (kept %d), want it to say 3 settings were kept", rep.String(), rep.OverridesKept)
		}

		tg := mustTarget(t, st, "county_zcwj")
		if tg.Enabled || tg.ScheduleCron != "30 3 * * *" || tg.ExpectedCadenceDays != 10 {
			t.Errorf("after sync: enabled=%v cron=%q cadence=%d, want the console's false, \"30 3 * * *\", 10",
				tg.Enabled, tg.ScheduleCron, tg.ExpectedCadenceDays)
		}
		if tg.ChannelName != "政策文件库" {
			t.Errorf("channel_name %q, want the files' new 政策文件库 (nobody overrode it)", tg.ChannelName)
		}

		p := provenance(t, svc, "county_zcwj")
		tests := []struct {
			field, source, by, value, yaml string
		}{
			{model.FieldEnabled, target.FromOverride, "user:alice", "false", "true"},
			{model.FieldScheduleCron, target.FromOverride, "user:bob", "30 3 * * *", config.AssignCron("county_zcwj")},
			{model.FieldExpectedCadenceDays, target.FromOverride, "user:bob", "10", "14"},
			{model.FieldChannelName, target.FromYAML, "", "政策文件库", ""},
			{model.FieldDept, target.FromYAML, "", "mapped:2101", ""},
		}
		for _, tt := range tests {
			got := p[tt.field]
			if got.Source != tt.source || got.ChangedBy != tt.by || got.Value != tt.value {
				t.Errorf("%s: source %q by %q value %q, want %q by %q value %q",
					tt.field, got.Source, got.ChangedBy, got.Value, tt.source, tt.by, tt.value)
			}
			if tt.yaml != "" && (got.YAMLValue == nil || *got.YAMLValue != tt.yaml) {
				t.Errorf("%s: YAML value %v, want %q (what the files say now)", tt.field, got.YAMLValue, tt.yaml)
			}
			if tt.source == target.FromOverride && got.ChangedAt == nil {
				t.Errorf("%s: override without a time", tt.field)
			}
		}

		// An untouched target follows the files entirely.
		if p := provenance(t, svc, "county_gzbg"); p[model.FieldEnabled].Source != target.FromYAML {
			t.Errorf("untouched target: enabled from %q, want yaml", p[model.FieldEnabled].Source)
		}

		es := audit(t, st, "county_zcwj")
		if len(es) != 2 || es[0].Action != "target.update" || es[0].Actor != "user:bob" ||
			es[1].Action != "target.disable" || es[1].Actor != "user:alice" || es[1].Detail != "栏目改版" {
			t.Fatalf("audit:%s\nwant target.disable by user:alice (栏目改版) then target.update by user:bob", auditLines(es))
		}
		if !enabledIn(t, es[1].Before) || enabledIn(t, es[1].After) {
			t.Errorf("disable audit before %s after %s, want enabled true → false", es[1].Before, es[1].After)
		}
		if !strings.Contains(es[0].Detail, "「调度时间」") || !strings.Contains(es[0].Detail, "「预期更新周期（天）」") ||
			strings.Contains(es[0].Detail, "schedule_cron") {
			t.Errorf("update audit detail %q, want the changed fields named in the staff's words", es[0].Detail)
		}

		// Switching to the state it is already in records nothing.
		if _, err := svc.SetEnabled(ctx, "county_zcwj", false, "", "user:alice"); err != nil {
			t.Fatal(err)
		}
		if n := len(audit(t, st, "county_zcwj")); n != 2 {
			t.Errorf("disabling a disabled target wrote an audit entry (%d entries)", n)
		}
	})
}

// TestRevertGoesBackToYAML: a reverted field takes the files' value at
// once, the next sync keeps following the files, and only YAML targets with
// an override can be reverted.
func TestRevertGoesBackToYAML(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := setUp(t, st)
		svc := &target.Service{Store: st}
		if _, err := svc.SetEnabled(ctx, "county_zcwj", false, "", "user:alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Update(ctx, "county_zcwj", target.Patch{ExpectedCadenceDays: ptr(10)}, "user:bob"); err != nil {
			t.Fatal(err)
		}
		tg, err := svc.Revert(ctx, "county_zcwj", model.FieldEnabled, "user:carol")
		if err != nil {
			t.Fatal(err)
		}
		if !tg.Enabled || !mustTarget(t, st, "county_zcwj").Enabled {
			t.Errorf("revert enabled: target still disabled")
		}
		syncDir(t, st, dir)
		tg = mustTarget(t, st, "county_zcwj")
		if !tg.Enabled || tg.ExpectedCadenceDays != 10 {
			t.Errorf("after revert and sync: enabled=%v cadence=%d, want true (files) and 10 (bob's override kept)", tg.Enabled, tg.ExpectedCadenceDays)
		}
		p := provenance(t, svc, "county_zcwj")
		if p[model.FieldEnabled].Source != target.FromYAML || p[model.FieldExpectedCadenceDays].Source != target.FromOverride {
			t.Errorf("provenance enabled %q cadence %q, want yaml and override", p[model.FieldEnabled].Source, p[model.FieldExpectedCadenceDays].Source)
		}
		// Following the files again means a file's change reaches the row.
		editFile(t, filepath.Join(dir, "sites", "county.yaml"), "    channel_name: 政策文件\n", "    channel_name: 政策文件\n    enabled: false\n")
		syncDir(t, st, dir)
		if mustTarget(t, st, "county_zcwj").Enabled {
			t.Errorf("files switched the reverted target off, sync left it on")
		}
		es := audit(t, st, "county_zcwj")
		if es[0].Action != "target.revert" || es[0].Actor != "user:carol" || enabledIn(t, es[0].Before) || !enabledIn(t, es[0].After) {
			t.Errorf("last audit:%s\nwant target.revert by user:carol, enabled false → true", auditLines(es[:1]))
		}

		refused := []struct{ name, code, field string }{
			{"field not overridden", "county_zcwj", model.FieldEnabled},
			{"unknown field", "county_zcwj", "colour"},
			{"target from the console", "county_new", model.FieldEnabled},
		}
		if _, err := svc.Create(ctx, target.Input{SiteCode: "county", TargetCode: "county_new", TargetName: "新栏目",
			EntryURL: "http://www.county.gov.test/new/", DeptBinding: model.BindingCityLevel, Enabled: true}, "user:alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SetEnabled(ctx, "county_new", false, "", "user:alice"); err != nil {
			t.Fatal(err)
		}
		for _, r := range refused {
			if _, err := svc.Revert(ctx, r.code, r.field, "user:carol"); !errors.Is(err, target.ErrInvalid) {
				t.Errorf("%s: revert error %v, want ErrInvalid", r.name, err)
			}
		}
		p = provenance(t, svc, "county_new")
		if e := p[model.FieldEnabled]; e.Source != target.FromConsole || e.ChangedBy != "user:alice" {
			t.Errorf("console target enabled: %+v, want console, changed by user:alice", e)
		}
		if n := p[model.FieldTargetName]; n.Source != target.FromConsole || n.ChangedBy != "user:alice" {
			t.Errorf("console target name: %+v, want console, created by user:alice", n)
		}
	})
}

// TestTemplateBindingsKept: after a sync every target keeps its binding, so
// a template target of the city level and one shared by departments — both
// without a department — are told apart.
func TestTemplateBindingsKept(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		setUp(t, st)
		tests := []struct {
			code, binding string
			dept          *int64
		}{
			{"county_zcwj", model.BindingMapped, ptr(int64(2101))},
			{"county_gzbg", model.BindingCityLevel, nil},
			{"county_tjgb", model.BindingCrossDept, nil},
			{"qingcheng_gzbg", model.BindingCityLevel, nil},
			{"qingcheng_qcfgw_2849", model.BindingMapped, ptr(int64(2101))},
		}
		for _, tt := range tests {
			tg := mustTarget(t, st, tt.code)
			if tg.DeptBinding != tt.binding || (tg.DeptID == nil) != (tt.dept == nil) || (tt.dept != nil && *tg.DeptID != *tt.dept) {
				t.Errorf("%s: binding %q dept %v, want %q %v", tt.code, tg.DeptBinding, tg.DeptID, tt.binding, tt.dept)
			}
		}
	})
}

// TestInputChecks: each refused input names its field, and nothing is
// written.
func TestInputChecks(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		setUp(t, st)
		// A department a person has not bound yet.
		qc, err := st.SiteByCode(ctx, "qingcheng")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.WithTx(ctx, func(tx *store.Tx) error {
			_, _, err := tx.UpsertSiteDepartment(ctx, &model.SiteDepartment{SiteID: qc.ID, DeptPath: "qcjyj",
				DeptBinding: model.BindingPending, DetectStatus: model.DetectOK, Enabled: true})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		svc := &target.Service{Store: st}
		good := func() target.Input {
			return target.Input{SiteCode: "county", TargetCode: "county_x", TargetName: "县级站点｜新栏目",
				EntryURL: "http://www.county.gov.test/x/", DeptBinding: model.BindingMapped, LocalDeptID: ptr(int64(37)),
				Enabled: true}
		}
		tests := []struct {
			name  string
			edit  func(in *target.Input)
			field string
		}{
			{"entry on another site", func(in *target.Input) { in.EntryURL = "http://www.gd.gov.test/x/" }, "entry_url"},
			{"entry not a full URL", func(in *target.Input) { in.EntryURL = "/x/" }, "entry_url"},
			{"sample on another site", func(in *target.Input) { in.SampleArticleURL = "http://evil.test/a.html" }, "sample_article_url"},
			{"cron that does not parse", func(in *target.Input) { in.Schedule = "61 2 * * *" }, "schedule"},
			{"cron more than once a day", func(in *target.Input) { in.Schedule = "0 */6 * * *" }, "schedule"},
			{"cadence zero days", func(in *target.Input) { in.ExpectedCadenceDays = -1 }, "expected_cadence_days"},
			{"code taken", func(in *target.Input) { in.TargetCode = "county_gzbg" }, "target_code"},
			{"code with spaces", func(in *target.Input) { in.TargetCode = "county x" }, "target_code"},
			{"no name", func(in *target.Input) { in.TargetName = " " }, "target_name"},
			{"unknown department", func(in *target.Input) { in.LocalDeptID = ptr(int64(999)) }, "local_dept_id"},
			{"mapped without department", func(in *target.Input) { in.LocalDeptID = nil }, "local_dept_id"},
			{"pending binding", func(in *target.Input) { in.DeptBinding = model.BindingPending; in.LocalDeptID = nil }, "dept_binding"},
			{"city_level with a department", func(in *target.Input) { in.DeptBinding = model.BindingCityLevel }, "local_dept_id"},
			{"unknown site", func(in *target.Input) { in.SiteCode = "nowhere" }, "site_code"},
			{"CMS column under a pending department", func(in *target.Input) {
				*in = target.Input{SiteCode: "qingcheng", DeptPath: "qcjyj", ColumnID: "4001", TargetName: "教育动态", Enabled: true}
			}, "dept_path"},
			{"CMS column under an unknown department", func(in *target.Input) {
				*in = target.Input{SiteCode: "qingcheng", DeptPath: "nosuch", ColumnID: "4001", TargetName: "x", Enabled: true}
			}, "dept_path"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				in := good()
				tt.edit(&in)
				_, err := svc.Create(ctx, in, "user:alice")
				var ie *target.InputError
				if !errors.As(err, &ie) || !errors.Is(err, target.ErrInvalid) {
					t.Fatalf("create: %v, want an input error on %s", err, tt.field)
				}
				if !slices.ContainsFunc(ie.Problems, func(p target.FieldError) bool { return p.Field == tt.field && p.Message != "" }) {
					t.Errorf("problems %+v, want one on %s", ie.Problems, tt.field)
				}
			})
		}
		// The good input itself passes, so each refusal above is its edit's.
		if _, err := svc.Create(ctx, good(), "user:alice"); err != nil {
			t.Fatalf("good input refused: %v", err)
		}
		// Only the good input was written.
		for _, code := range []string{"county x", "qingcheng_qcjyj_4001", "qingcheng_nosuch_4001"} {
			if _, err := st.TargetByCode(ctx, code); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("refused target %s was written: %v", code, err)
			}
		}
		es, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "target"})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 1 || es[0].ObjectID != "county_x" || es[0].Action != "target.create" {
			t.Errorf("audit:%s\nwant only the good target's creation", auditLines(es))
		}

		// An update is checked the same way, and the template of a CMS
		// column cannot be rewritten.
		patches := []struct {
			name  string
			code  string
			patch target.Patch
			field string
		}{
			{"update cadence", "county_gzbg", target.Patch{ExpectedCadenceDays: ptr(0)}, "expected_cadence_days"},
			{"update sample off site", "county_gzbg", target.Patch{SampleArticleURL: ptr("https://www.gd.gov.test/a.html")}, "sample_article_url"},
			{"update binding pending", "county_gzbg", target.Patch{DeptBinding: ptr(model.BindingPending)}, "dept_binding"},
			{"CMS entry URL", "qingcheng_gzbg", target.Patch{EntryURL: ptr("http://www.qingcheng.gov.test/x/")}, "entry_url"},
			{"CMS binding", "qingcheng_gzbg", target.Patch{DeptBinding: ptr(model.BindingCrossDept)}, "dept_binding"},
		}
		for _, tt := range patches {
			if _, err := svc.Update(ctx, tt.code, tt.patch, "user:alice"); !errors.Is(err, target.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("%s: %v, want an input error naming %s", tt.name, err, tt.field)
			}
		}
		if n := len(audit(t, st, "county_gzbg")); n != 0 {
			t.Errorf("refused updates wrote %d audit entries", n)
		}
		if _, err := svc.Update(ctx, "nosuch", target.Patch{}, "user:alice"); !errors.Is(err, target.ErrNotFound) {
			t.Errorf("update of a missing target: %v, want ErrNotFound", err)
		}
	})
}

// TestUpdateWithoutChangeOrSave: a patch that changes nothing writes
// nothing, and a preview shows the change without saving it.
func TestUpdateWithoutChangeOrSave(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		setUp(t, st)
		svc := &target.Service{Store: st}
		res, err := svc.Update(ctx, "county_gzbg", target.Patch{ExpectedCadenceDays: ptr(365), ChannelName: ptr("政府工作报告")}, "user:alice")
		if err != nil || res.Saved || len(res.Changed) != 0 {
			t.Errorf("no-change update: %v saved=%v changed=%v, want nothing saved", err, res.Saved, res.Changed)
		}
		res, err = svc.PreviewUpdate(ctx, "county_gzbg", target.Patch{ExpectedCadenceDays: ptr(180)})
		if err != nil || res.Saved || res.Target.ExpectedCadenceDays != 180 || len(res.Changed) != 1 {
			t.Errorf("preview: %v %+v, want the change shown and not saved", err, res)
		}
		if tg := mustTarget(t, st, "county_gzbg"); tg.ExpectedCadenceDays != 365 {
			t.Errorf("preview saved cadence %d", tg.ExpectedCadenceDays)
		}
		if p := provenance(t, svc, "county_gzbg"); p[model.FieldExpectedCadenceDays].Source != target.FromYAML {
			t.Errorf("no-change update or preview left an override")
		}
		if es := audit(t, st, "county_gzbg"); len(es) != 0 {
			t.Errorf("audit:%s\nwant none", auditLines(es))
		}
	})
}
