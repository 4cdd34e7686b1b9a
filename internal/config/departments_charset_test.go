package config

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// gbCSV is a departments file as an OA system on Chinese Windows exports
// it: GB18030 (GBK) bytes, CRLF line ends, no BOM.
func gbCSV(t *testing.T, text string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b, []byte(text)) {
		t.Fatal("test data is not GB18030-specific")
	}
	return b
}

// A GBK export is stored with its real names on both databases, not as
// mojibake (SQLite) or a refused write (PostgreSQL).
func TestImportGB18030DepartmentsCSV(t *testing.T) {
	want := map[int64]string{
		37: "清远市发展和改革局",
		41: "清远市教育局",
		52: "连州市𠀀试点办公室", // outside GBK: a four-byte GB18030 character
	}
	raw := gbCSV(t, "DEPT_ID,DEPT_NAME,SHORT_NAME\r\n"+
		"37,清远市发展和改革局,市发改局\r\n"+
		"41,清远市教育局,市教育局\r\n"+
		"52,连州市𠀀试点办公室,\r\n")
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		depts, errs := ReadDepartmentsCSV(bytes.NewReader(raw), "oa.csv")
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

func TestReadDepartmentsCSVUndecodable(t *testing.T) {
	gb := gbCSV(t, "41,清远市教育局\n")
	tests := []struct {
		name string
		raw  []byte
		want string // the error, file:line first
	}{
		{
			// Latin-1 "é" followed by a newline is no GB18030 character.
			name: "neither UTF-8 nor GB18030 on line 3",
			raw:  []byte("dept_id,dept_name\n37,ok\n38,caf\xe9\n39,fine\n"),
			want: "d.csv:3: this line is neither UTF-8 nor GB18030/GBK text",
		},
		{
			name: "GBK lines and a UTF-8 line",
			raw:  append([]byte("dept_id,dept_name\n37,清远市发展和改革局\n"), gb...),
			want: "d.csv:3: this line is GB18030/GBK text but line 2 is UTF-8",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			depts, errs := ReadDepartmentsCSV(bytes.NewReader(tc.raw), "d.csv")
			if depts != nil {
				t.Errorf("got %d departments from an undecodable file, want none", len(depts))
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Fatalf("errors = %v, want one starting %q", errs, tc.want)
			}
		})
	}
}
