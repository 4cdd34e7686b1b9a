//go:build !unix

package neardup

import "time"

// cpuTime is not measured here; the report shows 0.
func cpuTime() time.Duration { return 0 }
