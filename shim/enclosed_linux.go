package shim

import (
	"errors"
	"syscall"
)

// unixSocketsRefused reports whether socket(AF_UNIX) fails with EACCES,
// as execgate's seccomp filter makes it fail for a confined command.
func unixSocketsRefused() bool {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err == nil {
		syscall.Close(fd)
		return false
	}
	return errors.Is(err, syscall.EACCES)
}
