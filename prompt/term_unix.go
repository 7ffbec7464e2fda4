//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package prompt

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags opens the terminal without ever making it the controlling
// terminal (this matters for tests, which open a pty by name).
const openFlags = os.O_RDWR | syscall.O_NOCTTY

// pollInterval is how long one read waits for a key (termios VTIME, in
// tenths of a second); it bounds how late a cancel or timeout is noticed.
const pollInterval = 1

// pollMode makes reads on the raw terminal fd return after pollInterval
// even without input (VMIN=0, VTIME>0), so one plain loop can watch the
// keyboard, the clock and ctx on any Unix, with no goroutine left blocked in
// read. Setting it with the flushing ioctl also discards typeahead: keys
// pressed before the question was shown must not answer it.
func pollMode(fd int) error {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return err
	}
	t.Cc[unix.VMIN] = 0
	t.Cc[unix.VTIME] = pollInterval
	return unix.IoctlSetTermios(fd, ioctlSetTermiosFlush, t)
}

// tryLock takes the terminal for this prompt without blocking, so that two
// commands asking at once cannot interleave their screens or steal each
// other's keys. The lock goes with the fd.
func tryLock(fd int) (bool, error) {
	err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
