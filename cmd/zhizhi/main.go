// Command zhizhi is the polite government-portal crawler. Everything lives
// in internal/; this file only hands control to the CLI.
package main

import "zhizhi/internal/cli"

func main() { cli.Execute() }
