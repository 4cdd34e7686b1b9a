package cli

import "bytes"

// runInProcess runs the zhizhi command line in this process with fresh
// settings, as a new process would read them, and returns what it printed
// on standard output and the error Execute returned (an *exitError for a
// refusal with its exit code).
func runInProcess(args ...string) (string, error) {
	settings = Settings{}
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
