package config_test

import (
	"fmt"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/config/configtest"
)

func TestAssignCronStableAndInWindow(t *testing.T) {
	// A fixed expectation: the hash must not change between releases, or
	// every target would move to another minute after an upgrade.
	if got := config.AssignCron("gd_zcwj"); got != "41 4 * * *" {
		t.Errorf("AssignCron(gd_zcwj) = %q, want the FNV-1a minute \"41 4 * * *\"", got)
	}
	for i := range 300 {
		configtest.CheckNightly(t, config.AssignCron(fmt.Sprintf("site_dept_%d", i)))
	}
}

func TestAssignCronSpreadsEvenly(t *testing.T) {
	// 2400 codes over 4 hours: each hour should get about 600.
	perHour := map[string]int{}
	minutes := map[string]bool{}
	for i := range 2400 {
		spec := config.AssignCron(fmt.Sprintf("qingcheng_qcfgw_%d", 2000+i))
		var m, h int
		if _, err := fmt.Sscanf(spec, "%d %d * * *", &m, &h); err != nil {
			t.Fatalf("cron %q: %v", spec, err)
		}
		perHour[fmt.Sprint(h)]++
		minutes[spec] = true
	}
	for h, n := range perHour {
		if n < 480 || n > 720 {
			t.Errorf("hour %s got %d of 2400 targets, want about 600", h, n)
		}
	}
	if len(minutes) < 230 {
		t.Errorf("only %d of 240 minutes used", len(minutes))
	}
}
