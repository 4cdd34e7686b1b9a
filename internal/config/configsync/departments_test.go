package configsync

import (
	"bytes"
	"context"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configtest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// A GBK export is stored with its real names on both databases, not as
// mojibake (SQLite) or a refused write (PostgreSQL).
func TestImportGB18030DepartmentsCSV(t *testing.T) {
	want := map[int64]string{
		37: "清远市发展和改革局",
		41: "清远市教育局",
		52: "连州市𠀀试点办公室", // outside GBK: a four-byte GB18030 character
	}
	raw := configtest.GB18030(t, "DEPT_ID,DEPT_NAME,SHORT_NAME\r\n"+
		"37,清远市发展和改革局,市发改局\r\n"+
		"41,清远市教育局,市教育局\r\n"+
		"52,连州市𠀀试点办公室,\r\n")
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		depts, errs := config.ReadDepartmentsCSV(bytes.NewReader(raw), "oa.csv")
		if len(errs) > 0 {
			t.Fatalf("a GB18030 file was refused: %v", errs)
		}
		ctx := context.Background()
		if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
			t.Fatalf("import: %v", err)
		}
		got, err := st.ListDepartments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("stored %d departments, want %d", len(got), len(want))
		}
		for _, d := range got {
			if d.DeptName != want[d.DeptID] {
				t.Errorf("dept %d stored as %q, want %q", d.DeptID, d.DeptName, want[d.DeptID])
			}
			if d.DeptID == 37 && d.ShortName != "市发改局" {
				t.Errorf("dept 37 short name stored as %q, want 市发改局", d.ShortName)
			}
		}
	})
}
