//go:build !unix

package config

import "errors"

// checkManagedOwner cannot tell who owns a file here, so no managed file
// is trusted.
func checkManagedOwner(string) error {
	return errors.New("this system cannot tell who owns the managed policy; it is refused")
}
