package ui

import (
	"regexp"
	"strings"
	"testing"

	"zhizhi/internal/store/storetest"
)

func TestCronWords(t *testing.T) {
	for expr, want := range map[string]string{
		"17 2 * * *":   "每天 02:17",
		"0 2 * * *":    "每天 02:00",
		"30 8 * * 1-5": "工作日 08:30",
		"0 3 * * 1":    "每周一 03:00",
		"0 3 * * 0":    "每周日 03:00",
		"5 4 1 * *":    "每月 1 日 04:05",
		"10 */6 * * *": "每 6 小时（第 10 分）",
		"*/15 * * * *": "每 15 分钟",
		"0 2 1 1 *":    "自定义（cron 0 2 1 1 *）",
	} {
		if got := cronWords(expr); got != want {
			t.Errorf("cronWords(%q) = %q, want %q", expr, got, want)
		}
	}
}

// TestTargetPageSaysScheduleInWords: the target page shows when it runs
// in words, not as a cron expression.
func TestTargetPageSaysScheduleInWords(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	body := w.get(t, "/admin/targets/lianzhou_tzgg", w.login(t, "viewer")).Body.String()
	if !regexp.MustCompile(`每天 0[1-4]:[0-5][0-9]`).MatchString(body) {
		t.Errorf("the target page does not say its daily time in words")
	}
	if m := regexp.MustCompile(`\b\d{1,2} \d{1,2} \* \* \*`).FindString(body); m != "" {
		t.Errorf("the target page shows the raw cron %q", m)
	}
}

// TestDryRunProblemsInWords: a dry-run whose sample page is missing says
// so in Chinese on the console, not "sample page: … answered HTTP 404".
func TestDryRunProblemsInWords(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	op := w.login(t, "operator")
	missing := strings.TrimSuffix(lianzhouList, "/") + "/no-such-article-404.html"
	body := w.post(t, "/admin/targets/new/dry-run", op, newTargetForm("lianzhou_tzgg_copy", missing)).Body.String()
	if !strings.Contains(body, "试运行未通过") {
		t.Fatalf("the dry-run of a missing sample is not red:\n%.2000s", body)
	}
	for _, bad := range []string{"answered HTTP", "sample page:", "the title selector", "the body has"} {
		if strings.Contains(body, bad) {
			t.Errorf("the dry-run shows English %q", bad)
		}
	}
	if !strings.Contains(body, "样例文章") || !strings.Contains(body, "404") {
		t.Errorf("the dry-run does not say the sample article was not found")
	}
}
