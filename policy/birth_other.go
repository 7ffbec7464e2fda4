//go:build !linux

package policy

import "time"

// fileBirth reports false: birth times are read on Linux only, so nothing
// is a scratch file elsewhere.
func fileBirth(string) (time.Time, int64, uint32, bool) { return time.Time{}, 0, 0, false }
