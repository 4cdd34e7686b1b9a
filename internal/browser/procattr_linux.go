package browser

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts Chromium in a process group of its own, so the
// Ctrl-C a terminal sends to zhizhi's group does not kill a render that
// zhizhi means to let finish; zhizhi stops Chromium itself. Pdeathsig is
// kept from chromedp's default: Chromium dies with zhizhi's starting thread.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
