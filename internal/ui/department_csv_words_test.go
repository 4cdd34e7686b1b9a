package ui

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/store/storetest"
)

// TestDepartmentCSVErrorsInChinese: every kind of bad line in an uploaded
// department CSV is told in Chinese, with its line number, the column at
// fault and what to change — no English sentence from the reader behind
// it. (The command line keeps its own English words, also with the line.)
func TestDepartmentCSVErrorsInChinese(t *testing.T) {
	w := newWorld(t, storetest.SQLite(t))
	op := w.login(t, "operator")
	for _, tc := range []struct {
		name, csv string
		want      []string
	}{
		{"fields", "DEPT_ID,DEPT_NAME,PARENT_DEPT_ID,DEPT_LEVEL,UPDATED_AT\n" +
			"9001,新设局,1,2,2024-03-05\n" + // line 2: good
			",无编号,1,2,\n" + // 3
			"-4,负编号,1,2,\n" + // 4
			"9001,重复,1,2,\n" + // 5
			"9003,,1,2,\n" + // 6
			"9004,上级有误,一,2,\n" + // 7
			"9005,日期有误,1,2,三月五日\n" + // 8
			"9006,少一列,1,2\n", // 9
			[]string{"第 3 行：DEPT_ID 为空", "第 4 行：DEPT_ID「-4」不是正整数", "第 5 行：DEPT_ID 9001 与第 2 行重复",
				"第 6 行：DEPT_NAME 为空", "第 7 行：PARENT_DEPT_ID「一」不是整数", "第 8 行：UPDATED_AT「三月五日」不是日期，请写成 2024-03-05",
				"第 9 行：这一行有 4 列，表头有 5 列，请检查是否少了或多了逗号"}},
		{"header", "DEPT_NAME,DEPT_NAME\n新设局,新设局\n",
			[]string{"第 1 行：表头中 DEPT_NAME 出现了两次", "第 1 行：表头缺少 DEPT_ID 列"}},
		{"quotes", "DEPT_ID,DEPT_NAME\n9001,\"新设局\n", []string{"第 2 行：这一行的引号不成对"}},
		{"encoding", "DEPT_ID,DEPT_NAME\n9001,\xff\xfe\xfd\n", []string{"第 2 行：这一行既不是 UTF-8 也不是 GB18030/GBK"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := w.upload(t, op, tc.csv)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", rec.Code)
			}
			body := htmlUnescape(rec.Body.String())
			for _, s := range tc.want {
				if !strings.Contains(body, s) {
					t.Errorf("the page lacks %q", s)
				}
			}
			// The listed lines, as a person reads them: no English word
			// but the columns' own names.
			for _, line := range regexp.MustCompile(`第 \d+ 行：[^<]*`).FindAllString(body, -1) {
				rest := regexp.MustCompile(`[A-Z_]{2,}|UTF-8|GB18030|GBK`).ReplaceAllString(line, "")
				if m := regexp.MustCompile(`[A-Za-z]{2,}`).FindString(rest); m != "" {
					t.Errorf("a bad line is told in English (%q): %s", m, line)
				}
			}
		})
	}
}
