package cli

import (
	"runtime"
	"sync"
	"testing"
)

// busyCPUs keeps every CPU of the machine busy until t ends: one goroutine
// per CPU spinning in this process, competing with the serve processes and
// the simulated web for the processor, as other work on a loaded server
// does. Politeness is judged from the sites' log while it runs: a pace
// kept only when the crawler gets the CPU the moment it asks is not kept.
func busyCPUs(t *testing.T) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 100_000 { // a slice of work between looks at stop
					x = x*6364136223846793005 + 1442695040888963407
				}
				if x == 0 {
					t.Log("unreachable") // keeps the loop from being optimised away
				}
			}
		}()
	}
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
}
