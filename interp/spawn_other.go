//go:build !linux

package interp

import (
	"os"
	"syscall"
)

// spawn declines: elsewhere os/exec starts the shell.
func spawn(o *Options, stdin, stdout, stderr *os.File) (child, bool, error) {
	return nil, false, nil
}

// deathSignal is the child's process attributes: no parent-death signal
// here, which only Linux has.
func deathSignal() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
