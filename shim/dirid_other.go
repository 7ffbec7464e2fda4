//go:build !linux

package shim

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// dirIdentity is what tells the directory dir apart from another made at
// its path later: its inode and, on the BSDs and macOS, its birth time;
// "" when it cannot be read.
func dirIdentity(dir string) string {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return ""
	}
	return "\x00" + strconv.FormatUint(uint64(st.Ino), 10) + "\x00" + strconv.FormatInt(st.Btim.Sec, 10) + "." + strconv.FormatInt(int64(st.Btim.Nsec), 10)
}
