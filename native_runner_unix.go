//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd lead its own process group and, when its
// context ends, kills the whole group: what the child started (simctl
// spawn's log) ends with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
