package shim

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// dirIdentity is what tells the directory dir apart from another made at
// its path later: its inode, and its birth time where the file system
// keeps one (statx); "" when it cannot be read.
func dirIdentity(dir string) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return ""
	}
	id := "\x00" + strconv.FormatUint(st.Ino, 10)
	if st.Mask&unix.STATX_BTIME != 0 {
		id += "\x00" + strconv.FormatInt(st.Btime.Sec, 10) + "." + strconv.FormatUint(uint64(st.Btime.Nsec), 10)
	}
	return id
}
