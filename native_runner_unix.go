//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd lead its own process group, killed whole when
// its context ends.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		endProcessGroup(cmd)
		return nil
	}
}

// endProcessGroup kills what is left of cmd's process group. It is called
// once cmd has ended too: a child that exits by itself may leave a process
// it started (simctl spawn's log) running in the group, which nothing else
// would ever end. The adb server a first adb command starts is not in it:
// adb makes its server the leader of a session of its own (setsid), so it
// lives on as the developer's, as it does after any adb command. The group
// id cannot name another group meanwhile: the kernel does not hand out a
// pid that is still some group's id.
func endProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
	}
}
