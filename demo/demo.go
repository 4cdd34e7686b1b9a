// Package demo holds the simulated web's configuration: the sites,
// departments and adapter templates that describe the hosts internal/sim
// serves. It is the demo's world, not a starting point for an operator's
// configuration (`zhizhi init DIR` writes that), and `zhizhi demo` uses the
// copy embedded here whatever the current directory.
package demo

import "embed"

// Config is the bundled configuration directory, rooted at "config".
//
//go:embed config
var Config embed.FS
