package store_test

import (
	"context"
	"errors"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestTargetBindingMigration: migration 00014 gives the targets that exist
// when it runs their binding (a site department's, or mapped for a template
// target with a department), and it can be undone and redone.
func TestTargetBindingMigration(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		dept := int64(37)
		mapped := &model.Target{SiteID: f.yamlSite, TargetCode: "gd_mapped", TargetName: "x", EntryURL: "https://www.gd.gov.test/m/",
			DeptID: &dept, Enabled: true, Source: model.SourceYAML}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertTarget(ctx, mapped); return err }); err != nil {
			t.Fatal(err)
		}
		if err := store.MigrateTo(ctx, s, 12); err != nil {
			t.Fatalf("down to 12: %v", err)
		}
		if err := store.MigrateTo(ctx, s, 14); err != nil {
			t.Fatalf("up to 14: %v", err)
		}
		tests := []struct {
			id   int64
			want string
		}{
			{f.cmsTgt, model.BindingMapped}, // from its site department
			{mapped.ID, model.BindingMapped},
			{f.yamlTarget, ""}, // unknown until the next sync
		}
		for _, tt := range tests {
			tg, err := s.TargetByID(ctx, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if tg.DeptBinding != tt.want {
				t.Errorf("%s: binding %q after the migration, want %q", tg.TargetCode, tg.DeptBinding, tt.want)
			}
		}
	})
}

// TestTargetBindingRules: a target's binding agrees with its department —
// mapped names one, the other three none — and pending is never stored.
func TestTargetBindingRules(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		dept := int64(37)
		tests := []struct {
			name    string
			binding string
			dept    *int64
			ok      bool
		}{
			{"mapped with a department", model.BindingMapped, &dept, true},
			{"city_level without", model.BindingCityLevel, nil, true},
			{"mapped without a department", model.BindingMapped, nil, false},
			{"cross_dept with a department", model.BindingCrossDept, &dept, false},
			{"pending", model.BindingPending, nil, false},
			{"made up", "somewhere", nil, false},
		}
		for i, tt := range tests {
			tg := &model.Target{SiteID: f.yamlSite, TargetCode: "b" + string(rune('a'+i)), EntryURL: "https://www.gd.gov.test/b/",
				DeptBinding: tt.binding, DeptID: tt.dept, Enabled: true}
			err := s.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertTarget(ctx, tg); return err })
			if (err == nil) != tt.ok {
				t.Errorf("%s: %v, want ok=%v", tt.name, err, tt.ok)
			}
			if tt.binding == model.BindingPending && !errors.Is(err, store.ErrPendingBinding) {
				t.Errorf("pending: %v, want ErrPendingBinding", err)
			}
		}
	})
}

// TestTargetOverrides: an override replaces one of the same field, a sync's
// apply lays it over the files and learns what they say, and a delete
// forgets it.
func TestTargetOverrides(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		err := s.WithTx(ctx, func(tx *store.Tx) error {
			for _, o := range []store.TargetOverride{
				{TargetID: f.yamlTarget, Field: model.FieldEnabled, Value: "true", ChangedBy: "user:a"},
				{TargetID: f.yamlTarget, Field: model.FieldEnabled, Value: "false", ChangedBy: "user:b"},
				{TargetID: f.yamlTarget, Field: model.FieldExpectedCadenceDays, Value: "9", ChangedBy: "user:a"},
			} {
				if err := tx.SetTargetOverride(ctx, &o); err != nil {
					return err
				}
			}
			return tx.SetTargetOverride(ctx, &store.TargetOverride{TargetID: f.yamlTarget, Field: "colour", Value: "x", ChangedBy: "user:a"})
		})
		if err == nil {
			t.Fatal("an override of an unknown field was accepted")
		}
		// The refused override rolled the transaction back.
		if got, _ := s.TargetOverrides(ctx, f.yamlTarget); len(got) != 0 {
			t.Fatalf("overrides %+v kept from a rolled-back transaction", got)
		}
		fromFiles := &model.Target{SiteID: f.yamlSite, TargetCode: "gd_zcwj", TargetName: "政策文件",
			EntryURL: "https://www.gd.gov.test/zwgk/zcwj/", Enabled: true, ExpectedCadenceDays: 7, Source: model.SourceYAML}
		err = s.WithTx(ctx, func(tx *store.Tx) error {
			for _, o := range []store.TargetOverride{
				{TargetID: f.yamlTarget, Field: model.FieldEnabled, Value: "true", ChangedBy: "user:a"},
				{TargetID: f.yamlTarget, Field: model.FieldEnabled, Value: "false", ChangedBy: "user:b"},
				{TargetID: f.yamlTarget, Field: model.FieldExpectedCadenceDays, Value: "9", ChangedBy: "user:a"},
			} {
				if err := tx.SetTargetOverride(ctx, &o); err != nil {
					return err
				}
			}
			fields, err := tx.ApplyTargetOverrides(ctx, fromFiles)
			if len(fields) != 2 {
				t.Errorf("applied %v, want enabled and expected_cadence_days", fields)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if fromFiles.Enabled || fromFiles.ExpectedCadenceDays != 9 {
			t.Errorf("after apply: enabled %v cadence %d, want the overrides false and 9", fromFiles.Enabled, fromFiles.ExpectedCadenceDays)
		}
		kept, err := s.TargetOverrides(ctx, f.yamlTarget)
		if err != nil || len(kept) != 2 {
			t.Fatalf("overrides %+v %v, want 2", kept, err)
		}
		for _, o := range kept {
			want := map[string]string{model.FieldEnabled: "true", model.FieldExpectedCadenceDays: "7"}[o.Field]
			if o.YAMLValue == nil || *o.YAMLValue != want {
				t.Errorf("%s: YAML value %v, want %q as the files say", o.Field, o.YAMLValue, want)
			}
			if o.Field == model.FieldEnabled && o.ChangedBy != "user:b" {
				t.Errorf("enabled changed by %q, want the later user:b", o.ChangedBy)
			}
		}
		var removed bool
		if err := s.WithTx(ctx, func(tx *store.Tx) error {
			var err error
			removed, err = tx.DeleteTargetOverride(ctx, f.yamlTarget, model.FieldEnabled)
			return err
		}); err != nil || !removed {
			t.Fatalf("delete: %v removed=%v", err, removed)
		}
		if all, _ := s.ListTargetOverrides(ctx, model.FieldEnabled); len(all) != 0 {
			t.Errorf("enabled overrides left after delete: %+v", all)
		}
	})
}
