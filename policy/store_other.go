//go:build !unix

package policy

// noFollow is unavailable here; the os.Lstat checks before each open remain.
const noFollow = 0
