package config

import (
	"fmt"
	"hash/fnv"
)

// CronWindowStartHour and CronWindowMinutes define the nightly window in
// which targets are scheduled: 01:00–04:59.
const (
	CronWindowStartHour = 1
	CronWindowMinutes   = 240
)

// AssignCron returns the schedule_cron of a target: a daily time inside
// 01:00–04:59 chosen by an FNV-1a hash of target_code. The hash is fixed (not
// Go's per-process map hash), so a target keeps its minute across runs and
// machines, and distinct targets spread evenly over the 240 minutes instead
// of all firing at once.
func AssignCron(targetCode string) string {
	h := fnv.New32a()
	h.Write([]byte(targetCode))
	m := h.Sum32() % CronWindowMinutes
	return fmt.Sprintf("%d %d * * *", m%60, CronWindowStartHour+m/60)
}
