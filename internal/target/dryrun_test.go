package target_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"zhizhi/internal/crawl"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// The simulated Lianzhou site: a template site whose notices column lists
// articles at /tzgg/ (see config/sites/lianzhou.yaml).
const (
	lianzhouList    = "http://www.lianzhou.gov.test/tzgg/"
	lianzhouArticle = "http://www.lianzhou.gov.test/tzgg/202411/t20241111_510001.html"
)

// TestDryRunGate: with the real crawler against the simulated web, a target
// whose sample article the template cannot read is refused with the
// dry-run's findings and nothing is written; fixed, it passes and is saved.
// Without a sample URL it is saved with a warning.
func TestDryRunGate(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: "../../demo/config", Sim: sim.Options{Seed: 1}})
		svc := &target.Service{Store: st, Validate: w.Crawler(nil).Validate}
		in := target.Input{SiteCode: "lianzhou", TargetCode: "lianzhou_tzgg_copy", TargetName: "连州市人民政府网｜通知公告（副本）",
			EntryURL: lianzhouList, DeptBinding: model.BindingMapped, LocalDeptID: ptr(int64(2403)),
			ChannelName: "通知公告", ExpectedCadenceDays: 3, Enabled: true,
			// The list page is no article: no title, no body.
			SampleArticleURL: lianzhouList,
		}

		res, err := svc.Create(ctx, in, "user:alice")
		if !errors.Is(err, target.ErrDryRunFailed) {
			t.Fatalf("create with a list page as sample: %v, want ErrDryRunFailed", err)
		}
		if res == nil || res.Saved || res.DryRun == nil || res.DryRun.Green || res.DryRun.Validation == nil {
			t.Fatalf("refused create result %+v, want not saved with a red dry-run and its findings", res)
		}
		failed := res.DryRun.Failed()
		if !slices.ContainsFunc(failed, func(c target.Check) bool { return c.Name == "标题非空" }) {
			t.Errorf("failed checks %+v, want the title check among them", failed)
		}
		if res.DryRun.Validation.ListItems == 0 {
			t.Errorf("the list page was read, yet the dry-run reports no list items")
		}
		if _, err := st.TargetByCode(ctx, in.TargetCode); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("refused target was saved: %v", err)
		}
		if es := audit(t, st, in.TargetCode); len(es) != 0 {
			t.Errorf("refused target has audit entries:%s", auditLines(es))
		}

		// Fixed: a real article of the column.
		in.SampleArticleURL = lianzhouArticle
		res, err = svc.Create(ctx, in, "user:alice")
		if err != nil {
			t.Fatalf("create with a real sample: %v (dry-run %+v)", err, res)
		}
		d := res.DryRun
		if !res.Saved || d == nil || !d.Green || len(d.Failed()) != 0 {
			t.Fatalf("result saved=%v dry-run %+v, want saved after a green dry-run", res.Saved, d)
		}
		if v := d.Validation; v.Title == "" || v.ContentChars < 50 || v.ListItems == 0 || len(v.Attributes) == 0 {
			t.Errorf("green dry-run shows title %q, %d characters, %d list items, %d attributes; want all found",
				v.Title, v.ContentChars, v.ListItems, len(v.Attributes))
		}
		tg := mustTarget(t, st, in.TargetCode)
		if tg.Source != model.SourceAdmin || tg.CreatedBy != "user:alice" || tg.DeptID == nil || *tg.DeptID != 2403 {
			t.Errorf("saved target source %q created_by %q dept %v, want admin by user:alice, dept 2403", tg.Source, tg.CreatedBy, tg.DeptID)
		}
		if es := audit(t, st, in.TargetCode); len(es) != 1 || es[0].Action != "target.create" || es[0].Actor != "user:alice" || es[0].Before != nil {
			t.Errorf("audit:%s\nwant one target.create by user:alice with no before", auditLines(es))
		}

		// Updating a YAML target to a sample the template cannot read is
		// refused and leaves the row and its overrides alone.
		before := mustTarget(t, st, "lianzhou_tzgg")
		res, err = svc.Update(ctx, "lianzhou_tzgg", target.Patch{SampleArticleURL: ptr(lianzhouList), ExpectedCadenceDays: ptr(5)}, "user:bob")
		if !errors.Is(err, target.ErrDryRunFailed) || res == nil || res.DryRun == nil || res.DryRun.Green {
			t.Fatalf("update to a bad sample: %v %+v, want ErrDryRunFailed with the dry-run", err, res)
		}
		if after := mustTarget(t, st, "lianzhou_tzgg"); after.SampleArticleURL != before.SampleArticleURL || after.ExpectedCadenceDays != before.ExpectedCadenceDays {
			t.Errorf("refused update changed the row: sample %q cadence %d", after.SampleArticleURL, after.ExpectedCadenceDays)
		}
		if p := provenance(t, svc, "lianzhou_tzgg"); p[model.FieldSampleArticleURL].Source != target.FromYAML {
			t.Errorf("refused update left an override on sample_article_url")
		}

		// No sample URL: saved, with a warning to show.
		in2 := in
		in2.TargetCode, in2.SampleArticleURL = "lianzhou_tzgg_nosample", ""
		res, err = svc.Create(ctx, in2, "user:alice")
		if err != nil || !res.Saved || res.DryRun != nil || len(res.Warnings) == 0 {
			t.Errorf("create without a sample: %v saved=%v dry-run %+v warnings %q, want saved with a warning and no dry-run",
				err, res != nil && res.Saved, res.DryRun, res.Warnings)
		}

		// A service without a dry-run never waves a sample through.
		noDryRun := &target.Service{Store: st}
		in3 := in
		in3.TargetCode = "lianzhou_tzgg_unchecked"
		if _, err := noDryRun.Create(ctx, in3, "user:alice"); !errors.Is(err, target.ErrNoValidator) {
			t.Errorf("create with a sample and no dry-run: %v, want ErrNoValidator", err)
		}
		if _, err := st.TargetByCode(ctx, in3.TargetCode); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unchecked target was saved")
		}

		// Someone else switches the target off while its dry-run runs: the
		// update is refused rather than saving over that change unseen.
		real := w.Crawler(nil).Validate
		racing := &target.Service{Store: st, Validate: func(ctx context.Context, site *model.Site, tg *model.Target, entry, sample string) (*crawl.Validation, error) {
			if _, err := svc.SetEnabled(ctx, "lianzhou_zcwj", false, "", "user:carol"); err != nil {
				return nil, err
			}
			return real(ctx, site, tg, entry, sample)
		}}
		if _, err := racing.Update(ctx, "lianzhou_zcwj", target.Patch{ExpectedCadenceDays: ptr(9)}, "user:bob"); !errors.Is(err, target.ErrConflict) {
			t.Errorf("update racing another change: %v, want ErrConflict", err)
		}
		if tg := mustTarget(t, st, "lianzhou_zcwj"); tg.Enabled || tg.ExpectedCadenceDays == 9 {
			t.Errorf("after the race: enabled %v cadence %d, want carol's change kept and bob's refused", tg.Enabled, tg.ExpectedCadenceDays)
		}

		// Preview runs the dry-run and saves nothing.
		in4 := in
		in4.TargetCode = "lianzhou_tzgg_preview"
		res, err = svc.PreviewCreate(ctx, in4)
		if err != nil || res.Saved || res.DryRun == nil || !res.DryRun.Green {
			t.Errorf("preview: %v %+v, want a green dry-run and nothing saved", err, res)
		}
		if _, err := st.TargetByCode(ctx, in4.TargetCode); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("preview saved the target")
		}
	})
}
