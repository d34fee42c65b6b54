package scale

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when the thread that started it
// exits, which for a Go program is in effect when the process does.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
