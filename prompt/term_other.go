//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package prompt

import (
	"fmt"
	"os"
	"runtime"
)

const openFlags = os.O_RDWR

// Without termios there is no way to read single keys with a timeout, so
// the terminal channel is simply unavailable.

func pollMode(int) error { return unsupported() }

func tryLock(int) (bool, error) { return false, unsupported() }

func unsupported() error {
	return fmt.Errorf("%w: terminal prompts are not supported on %s", ErrUnavailable, runtime.GOOS)
}
