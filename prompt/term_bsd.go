//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package prompt

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios      = unix.TIOCGETA
	ioctlSetTermiosFlush = unix.TIOCSETAF
)
