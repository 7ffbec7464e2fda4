//go:build !unix

package config

// noFollow is unavailable here; the os.Lstat checks before each open remain.
const noFollow = 0
