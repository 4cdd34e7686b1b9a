package alert

import (
	"strings"
	"testing"
	"time"

	"zhizhi/internal/health"
)

// TestMessageTimesInTheConsoleZone: a chat message is read away from the
// console, so its times are in ZHIZHI_TIMEZONE with the zone named.
// 2030-01-02 00:23 UTC is 08:23 in Beijing, 00:23 in UTC, 09:23 in Tokyo.
func TestMessageTimesInTheConsoleZone(t *testing.T) {
	last := time.Date(2030, 1, 2, 0, 23, 0, 0, time.UTC)
	s := health.StaleTarget{TargetCode: "t1", SiteCode: "s1", CadenceDays: 7, LastArticleTime: &last, QuietDays: 30, LimitDays: 21}
	for _, tc := range []struct{ tz, want string }{
		{"", "2030-01-02 08:23 CST"},
		{"UTC", "2030-01-02 00:23 UTC"},
		{"Asia/Tokyo", "2030-01-02 09:23 JST"},
	} {
		t.Setenv("ZHIZHI_TIMEZONE", tc.tz)
		_, lines := staleMessage(s)
		if text := strings.Join(lines, "\n"); !strings.Contains(text, tc.want) {
			t.Errorf("ZHIZHI_TIMEZONE=%q: message says\n%s\nwant %q", tc.tz, text, tc.want)
		}
	}
}
