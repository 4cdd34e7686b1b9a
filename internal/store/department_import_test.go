package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// An import and its audit entry commit together: one without the other
// never happens, whichever of the two fails.
func TestImportDepartmentsByAuditsInOneTransaction(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		entries := func() []store.AuditEntry {
			t.Helper()
			es, err := s.ListAudit(ctx, store.AuditFilter{ObjectType: "department"})
			if err != nil {
				t.Fatal(err)
			}
			return es
		}
		exists := func(id int64) bool {
			_, err := s.DepartmentByID(ctx, id)
			return err == nil
		}
		res, err := s.ImportDepartmentsBy(ctx, "user:li", []model.Department{{DeptID: 1, DeptName: "清远市人民政府", State: 1},
			{DeptID: 2, DeptName: "清远市教育局", State: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if res != (store.DepartmentImport{Read: 2, Created: 2}) {
			t.Errorf("first import: %+v, want 2 read, 2 created", res)
		}
		res, err = s.ImportDepartmentsBy(ctx, "user:li", []model.Department{{DeptID: 1, DeptName: "清远市人民政府", State: 1},
			{DeptID: 2, DeptName: "清远市教育局（新）", State: 1}, {DeptID: 3, DeptName: "清远市财政局", State: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if res != (store.DepartmentImport{Read: 3, Created: 1, Updated: 1, Unchanged: 1}) {
			t.Errorf("second import: %+v, want 3 read, 1 created, 1 updated, 1 unchanged", res)
		}
		es := entries()
		if len(es) != 2 || es[0].Actor != "user:li" || es[0].Action != "department.import" {
			t.Fatalf("audit: %+v, want two department.import entries by user:li", es)
		}
		var after store.DepartmentImport
		if err := json.Unmarshal(es[0].After, &after); err != nil || after != res {
			t.Errorf("audit after %s, want the counts %+v", es[0].After, res)
		}

		// The audit entry fails (no actor): the import goes with it.
		if _, err := s.ImportDepartmentsBy(ctx, "", []model.Department{{DeptID: 4, DeptName: "清远市水利局", State: 1}}); err == nil {
			t.Error("an import without an actor succeeded")
		}
		if exists(4) {
			t.Error("an import whose audit entry failed was kept")
		}
		// The import fails on its second row: nothing of it is kept, nor audited.
		if _, err := s.ImportDepartmentsBy(ctx, "user:li", []model.Department{{DeptID: 5, DeptName: "清远市商务局", State: 1},
			{DeptID: 6, DeptName: "清远市审计局", ShortName: strings.Repeat("长", 51), State: 1}}); err == nil {
			t.Error("an import with a 51-character short name succeeded")
		}
		if exists(5) || exists(6) {
			t.Error("part of a failed import was kept")
		}
		if n := len(entries()); n != 2 {
			t.Errorf("audit entries after the failed imports: %d, want 2", n)
		}
	})
}
