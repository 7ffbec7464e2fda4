package shim

import (
	"crypto/rand"

	"golang.org/x/sys/unix"
)

// randomBytes fills b with random bytes for an event id. getrandom(2) is
// one system call; crypto/rand sets up its generator on first use, which
// the shim, a new process for every command, would pay every time.
func randomBytes(b []byte) {
	if n, err := unix.Getrandom(b, 0); err == nil && n == len(b) {
		return
	}
	rand.Read(b)
}
