package sim

import (
	"fmt"
	"time"
)

// The host bucket zhizhi keeps by default, as a site sees it: a burst of
// BucketBurst requests, then one per BucketEvery.
const (
	BucketBurst = 3
	BucketEvery = 2 * time.Second
)

// PolitenessViolations reads one host's access log (in arrival order) as
// the site saw it and says, in words, where it was treated impolitely:
// a request that arrived while another was in flight at the host, and any
// run of n requests spanning d beyond the bucket (n ≤ BucketBurst +
// d/BucketEvery). slack widens each span, for arrival times taken on a
// wall clock a little after the client's decision; 0 on a shared fake
// clock. Tests of every layer that fetches judge politeness with it.
func PolitenessViolations(host string, log []Access, slack time.Duration) []string {
	var out []string
	for _, a := range log {
		if a.InFlightAtArrival != 0 {
			out = append(out, fmt.Sprintf("%s: %s %s arrived with %d other requests in flight at the host",
				host, a.Method, a.Path, a.InFlightAtArrival))
		}
	}
	if v := BucketViolation(host, log, slack); v != "" {
		out = append(out, v)
	}
	return out
}

// BucketViolation is the first run of one host's requests (in arrival
// order) beyond the bucket, in words, or "" when there is none; slack as
// for PolitenessViolations.
func BucketViolation(host string, log []Access, slack time.Duration) string {
	for i := range log {
		for j := i + BucketBurst; j < len(log); j++ {
			n := j - i + 1
			span := log[j].Arrived.Sub(log[i].Arrived) + slack
			if allowed := BucketBurst + int(span/BucketEvery); n > allowed {
				return fmt.Sprintf("%s: %d requests within %v (from %s to %s), the bucket allows %d",
					host, n, span-slack, log[i].Path, log[j].Path, allowed)
			}
		}
	}
	return ""
}
