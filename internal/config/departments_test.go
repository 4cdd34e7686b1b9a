package config

import (
	"strings"
	"testing"
	"time"
)

func TestReadDepartmentsCSV(t *testing.T) {
	tests := []struct {
		name     string
		csv      string
		wantN    int
		wantErrs []string // "line:substring", in order
	}{
		{
			name: "OA upper-case headers with BOM",
			csv: "\ufeffDEPT_ID,DEPT_NAME,PARENT_DEPT_ID,DEPT_LEVEL,DEPT_CODE,SHORT_NAME,FULL_NAME,STATE,ORDER_ID,UPDATED_AT\n" +
				"37,清远市发展和改革局,1,2,QYFGW,市发改局,清远市发展和改革局,1,10,2024-03-05 10:00:00\n" +
				"41,清远市教育局,,,,,,,,\n",
			wantN: 2,
		},
		{
			name:  "snake_case headers, extra OA columns ignored, CRLF",
			csv:   "dept_id,dept_name,CREATE_USER\r\n37,清远市发展和改革局,admin\r\n",
			wantN: 1,
		},
		{
			name: "every bad line reported",
			csv: "dept_id,dept_name,updated_at\n" +
				"37,清远市发展和改革局,\n" + // line 2 ok
				",无编号,\n" + // line 3 missing id
				"abc,字母编号,\n" + // line 4 non-integer
				"37,重复,\n" + // line 5 duplicate
				"50,,\n" + // line 6 empty name
				"51,坏日期,2024-13-45\n" + // line 7 bad date
				"52,少一列\n" + // line 8 wrong column count
				"53,多一列,,x\n", // line 9 wrong column count
			wantErrs: []string{
				"3:dept_id is missing",
				`4:dept_id "abc" is not a positive integer`,
				"5:dept_id 37 is repeated (first on line 2)",
				"6:dept_name is empty",
				`7:updated_at "2024-13-45" is not a date`,
				"8:has 2 columns, the header has 3",
				"9:has 4 columns, the header has 3",
			},
		},
		{
			name:     "no dept_name column",
			csv:      "DEPT_ID,NAME\n1,x\n",
			wantErrs: []string{"1:header has no dept_name column"},
		},
		{
			name:     "empty file",
			csv:      "",
			wantErrs: []string{"1:the file is empty"},
		},
		{
			name:     "bad quotes",
			csv:      "dept_id,dept_name\n1,\"unterminated\n",
			wantErrs: []string{"2:"},
		},
		{
			name:     "non-integer level",
			csv:      "dept_id,dept_name,dept_level,order_id\n1,x,二,3\n",
			wantErrs: []string{`2:dept_level "二" is not an integer`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			depts, errs := ReadDepartmentsCSV(strings.NewReader(tc.csv), "d.csv")
			if len(tc.wantErrs) > 0 && depts != nil {
				t.Errorf("got %d departments from a file with bad lines, want none", len(depts))
			}
			if len(depts) != tc.wantN {
				t.Errorf("got %d departments, want %d", len(depts), tc.wantN)
			}
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("got errors %v, want %v", errs, tc.wantErrs)
			}
			for i, w := range tc.wantErrs {
				line, sub, _ := strings.Cut(w, ":")
				got := errs[i].Error()
				if !strings.HasPrefix(got, "d.csv:"+line+":") || !strings.Contains(got, sub) {
					t.Errorf("error %d = %q, want d.csv:%s: …%s…", i, got, line, sub)
				}
			}
		})
	}
}

func TestReadDepartmentsCSVFields(t *testing.T) {
	csv := "DEPT_ID,DEPT_NAME,PARENT_DEPT_ID,DEPT_LEVEL,DEPT_CODE,SHORT_NAME,FULL_NAME,STATE,ORDER_ID,UPDATED_AT\n" +
		"37, 清远市发展和改革局 ,1,2,QYFGW,市发改局,清远市发展和改革局,0,10,2024-03-05 10:00:00\n" +
		"41,清远市教育局,,,,,,,,\n"
	depts, errs := ReadDepartmentsCSV(strings.NewReader(csv), "d.csv")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	d := depts[0]
	if d.DeptID != 37 || d.DeptName != "清远市发展和改革局" || *d.ParentDeptID != 1 || *d.DeptLevel != 2 ||
		d.DeptCode != "QYFGW" || d.ShortName != "市发改局" || d.State != 0 || *d.OrderID != 10 {
		t.Errorf("first department = %+v", d)
	}
	// OA times are Beijing time: 10:00 there is 02:00 UTC.
	if want := time.Date(2024, 3, 5, 2, 0, 0, 0, time.UTC); d.UpdatedAt == nil || !d.UpdatedAt.Equal(want) {
		t.Errorf("updated_at = %v, want %v", d.UpdatedAt, want)
	}
	e := depts[1]
	if e.ParentDeptID != nil || e.DeptLevel != nil || e.OrderID != nil || e.UpdatedAt != nil || e.State != 1 {
		t.Errorf("second department = %+v, want empty optionals and state 1", e)
	}
}
