//go:build !unix

package main

import "os/exec"

// ownProcessGroup leaves cmd as it is: where there are no process groups,
// ending the context kills the child itself (exec.CommandContext).
func ownProcessGroup(cmd *exec.Cmd) {}

// endProcessGroup has nothing to do where there are no process groups.
func endProcessGroup(cmd *exec.Cmd) {}
