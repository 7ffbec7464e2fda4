package policy

import (
	"time"

	"golang.org/x/sys/unix"
)

// fileBirth is when the regular file p was made (statx's birth time, not
// following a final link), its size and how many names it has; false
// when p is not a regular file or its file system keeps no birth time.
func fileBirth(p string) (born time.Time, size int64, links uint32, ok bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_SIZE|unix.STATX_NLINK|unix.STATX_BTIME, &st); err != nil {
		return time.Time{}, 0, 0, false
	}
	if st.Mask&unix.STATX_BTIME == 0 || st.Mask&unix.STATX_NLINK == 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return time.Time{}, 0, 0, false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), int64(st.Size), st.Nlink, true
}
