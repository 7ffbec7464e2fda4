//go:build !linux

package shim

import "crypto/rand"

// randomBytes fills b with random bytes for an event id.
func randomBytes(b []byte) { rand.Read(b) }
