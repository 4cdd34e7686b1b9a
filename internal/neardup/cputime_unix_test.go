//go:build unix

package neardup

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU the process has used so far: unlike
// wall time it does not grow while other processes hold the cores.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
