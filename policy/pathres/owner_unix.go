//go:build unix

package pathres

import (
	"io/fs"
	"syscall"
)

// fileOwner is the uid that owns the file fi describes, -1 when unknown.
func fileOwner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
