package config_test

import (
	"bytes"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configtest"
)

func TestReadDepartmentsCSVUndecodable(t *testing.T) {
	gb := configtest.GB18030(t, "41,清远市教育局\n")
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
			depts, errs := config.ReadDepartmentsCSV(bytes.NewReader(tc.raw), "d.csv")
			if depts != nil {
				t.Errorf("got %d departments from an undecodable file, want none", len(depts))
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Fatalf("errors = %v, want one starting %q", errs, tc.want)
			}
		})
	}
}
