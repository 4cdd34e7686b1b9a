package configsync

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configtest"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// copyDir copies config's testdata/<name> to <tmp>/config so yaml_path is predictable
// and the files can be edited.
func copyDir(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", name)
	dst := filepath.Join(t.TempDir(), "config")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func importGoodDepartments(t *testing.T, st *store.Store, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, config.DepartmentsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	depts, errs := config.ReadDepartmentsCSV(f, config.DepartmentsFile)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, _, err := st.ImportDepartments(context.Background(), depts); err != nil {
		t.Fatal(err)
	}
}

func loadClean(t *testing.T, dir string) *config.Bundle {
	t.Helper()
	b, ps := config.Load(dir)
	if config.HasErrors(ps) {
		t.Fatalf("config has errors: %v", ps)
	}
	return b
}

func TestSyncTwiceChangesNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		importGoodDepartments(t, st, dir)

		first, err := Sync(ctx, st, loadClean(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		want := Report{
			Sites:   Counts{Created: 3},
			Depts:   Counts{Created: 4},
			Targets: Counts{Created: 7},
		}
		if first != want {
			t.Errorf("first sync = %+v, want %+v", first, want)
		}
		second, err := Sync(ctx, st, loadClean(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		want = Report{
			Sites:   Counts{Unchanged: 3},
			Depts:   Counts{Unchanged: 4},
			Targets: Counts{Unchanged: 7},
		}
		if second != want {
			t.Errorf("second sync = %+v, want %+v", second, want)
		}

		// What landed in the database is what the files say.
		gd, err := st.SiteByCode(ctx, "gd_ref")
		if err != nil {
			t.Fatal(err)
		}
		if gd.YAMLPath != "config/sites/gd_ref.yaml" || gd.CMSAdapter != "" || gd.Access != model.AccessFull {
			t.Errorf("gd_ref = yaml_path %q, cms_adapter %q, access %q", gd.YAMLPath, gd.CMSAdapter, gd.Access)
		}
		qy, err := st.SiteByCode(ctx, "gdqy")
		if err != nil {
			t.Fatal(err)
		}
		var params map[string]any
		if err := json.Unmarshal(qy.AdapterParams, &params); err != nil {
			t.Fatalf("adapter params %s: %v", qy.AdapterParams, err)
		}
		if qy.CMSAdapter != "gkmlpt" || qy.YAMLPath != "" || qy.DefaultFetchStrategy != model.StrategyBrowser ||
			params["sid"] != float64(763042) {
			t.Errorf("gdqy = cms_adapter %q, yaml_path %q, strategy %q, params %s",
				qy.CMSAdapter, qy.YAMLPath, qy.DefaultFetchStrategy, qy.AdapterParams)
		}
		qc, err := st.SiteByCode(ctx, "qingcheng")
		if err != nil {
			t.Fatal(err)
		}
		if qc.DefaultFetchStrategy != model.StrategyDirect {
			t.Errorf("qingcheng strategy = %q, want the adapter default %q", qc.DefaultFetchStrategy, model.StrategyDirect)
		}

		deptOf := map[string]*int64{}
		targets, err := st.ListTargets(ctx, store.TargetFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range targets {
			deptOf[tg.TargetCode] = tg.DeptID
			if tg.Source != model.SourceYAML {
				t.Errorf("%s source = %q, want yaml", tg.TargetCode, tg.Source)
			}
		}
		for code, want := range map[string]int64{"gdqy_qyfgw_14001": 37, "qingcheng_qcfgw_2849": 2101, "qingcheng_qcfgw_2850": 2101} {
			if got := deptOf[code]; got == nil || *got != want {
				t.Errorf("%s dept_id = %v, want %d", code, got, want)
			}
		}
		for _, code := range []string{"gdqy_tjgb_14100", "qingcheng_gzbg", "gd_zcwj"} {
			if got, ok := deptOf[code]; !ok || got != nil {
				t.Errorf("%s dept_id = %v (present %v), want NULL", code, got, ok)
			}
		}
	})
}

func TestSyncAssignsStableNightlyCrons(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		importGoodDepartments(t, st, dir)
		if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
			t.Fatal(err)
		}
		targets, err := st.ListTargets(ctx, store.TargetFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(targets) != 7 {
			t.Fatalf("%d targets, want 7", len(targets))
		}
		for _, tg := range targets {
			if tg.ScheduleCron != config.AssignCron(tg.TargetCode) {
				t.Errorf("%s cron %q, want %q", tg.TargetCode, tg.ScheduleCron, config.AssignCron(tg.TargetCode))
			}
			configtest.CheckNightly(t, tg.ScheduleCron)
		}
	})
}

func TestSyncDisablesTargetsGoneFromYAML(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		importGoodDepartments(t, st, dir)
		if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
			t.Fatal(err)
		}
		// Drop the second target (gd_tzgg) from gd_ref.yaml.
		path := filepath.Join(dir, "sites", "gd_ref.yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cut := strings.Index(string(data), "  - target_code: gd_tzgg")
		if cut < 0 {
			t.Fatal("gd_tzgg not found in testdata")
		}
		if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Sync(ctx, st, loadClean(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		if rep.TargetsDisabled != 1 || rep.Targets.Created+rep.Targets.Updated != 0 || rep.Targets.Unchanged != 6 {
			t.Errorf("report after removal = %+v, want 1 disabled, 6 unchanged", rep)
		}
		tg, err := st.TargetByCode(ctx, "gd_tzgg")
		if err != nil {
			t.Fatalf("removed target was deleted: %v", err)
		}
		if tg.Enabled {
			t.Error("removed target is still enabled")
		}
		// A third sync does not disable it again.
		rep, err = Sync(ctx, st, loadClean(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		if rep.TargetsDisabled != 0 {
			t.Errorf("third sync disabled %d targets, want 0", rep.TargetsDisabled)
		}
		// Putting it back re-enables the same row.
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err = Sync(ctx, st, loadClean(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Targets.Updated != 1 || rep.Targets.Created != 0 {
			t.Errorf("report after restore = %+v, want 1 updated", rep)
		}
		back, err := st.TargetByCode(ctx, "gd_tzgg")
		if err != nil {
			t.Fatal(err)
		}
		if !back.Enabled || back.ID != tg.ID {
			t.Errorf("restored target enabled=%v id=%d, want enabled and id %d", back.Enabled, back.ID, tg.ID)
		}
	})
}

func TestSyncRefusesUnknownDepartment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		// Only 37 is imported; qingcheng's qcfgw is bound to 2101.
		if _, _, err := st.ImportDepartments(ctx, []model.Department{{DeptID: 37, DeptName: "清远市发展和改革局", State: 1}}); err != nil {
			t.Fatal(err)
		}
		_, err := Sync(ctx, st, loadClean(t, dir))
		if err == nil {
			t.Fatal("sync with an unknown department succeeded")
		}
		msg := err.Error()
		for _, want := range []string{"qingcheng.yaml:12:5", "local_dept_id 2101 is not in local_department", "zhizhi dept import", "nothing was written"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		if strings.Count(msg, "2101") != 1 {
			t.Errorf("error names the dept more than once: %q", msg)
		}
		sites, err := st.ListSites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(sites) != 0 {
			t.Errorf("%d sites written by a failed sync", len(sites))
		}
	})
}

func TestSyncRefusesConfigWithErrors(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	b, _ := config.Load(filepath.Join("..", "testdata", "lint_bad"))
	_, err := Sync(ctx, st, b)
	if !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("err = %v, want ErrConfigInvalid", err)
	}
	if !strings.Contains(err.Error(), "gd_ref.yaml:4:12") {
		t.Errorf("error does not list the problems: %v", err)
	}
	sites, err := st.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 0 {
		t.Errorf("%d sites written from an invalid config", len(sites))
	}
}

// TestSyncRefusesDirectoryWithoutSites: syncing a directory with no site
// file (a wrong ZHIZHI_CONFIG_DIR) must not disable every target.
func TestSyncRefusesDirectoryWithoutSites(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	dir := copyDir(t, "lint_good")
	importGoodDepartments(t, st, dir)
	if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, config.SitesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := config.Load(empty)
	_, err := Sync(ctx, st, b)
	if !errors.Is(err, ErrConfigInvalid) || !strings.Contains(err.Error(), "holds no site file") {
		t.Fatalf("err = %v, want a refusal naming the empty directory", err)
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) == 0 {
		t.Error("syncing a directory without sites disabled the targets")
	}
}
