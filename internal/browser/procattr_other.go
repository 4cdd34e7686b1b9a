//go:build !linux

package browser

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts Chromium in a process group of its own, so the
// Ctrl-C a terminal sends to zhizhi's group does not kill a render that
// zhizhi means to let finish; zhizhi stops Chromium itself.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
