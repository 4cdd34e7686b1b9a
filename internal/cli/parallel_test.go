package cli

import "testing"

// waitBound runs t beside the package's other wait-bound tests (go test's
// -parallel says how many at once; scripts/test.sh sets it). It is for a
// test that spends its time waiting — on the simulated web's polite pace,
// on processes it starts, kills and restarts — rather than computing, so
// that the waits of many overlap instead of adding up.
//
// Such a test shares nothing with another one: its own temporary
// directories, a simulated web on free ports, its own database (an SQLite
// file or a fresh PostgreSQL database), serve processes on free ports, and no
// environment variable of this process set (a child gets its own in
// cmd.Env). A test that runs commands in this process (runInProcess, which
// resets the package's settings) must not call it. Parallel tests start
// only once every other test of the package has finished, so they never
// overlap those.
func waitBound(t *testing.T) {
	t.Helper()
	t.Parallel()
}
